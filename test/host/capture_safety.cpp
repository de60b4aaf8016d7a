// No streamlike call invalidates a CUDA graph capture (docs/cuda-graphs.md), checked without a GPU:
// the program carries the fake CUDA of test/fake_cuda (fake_cuda.h), exported so that
// libstreamlike's CUDA calls reach it. The fake puts a stream in an active or an invalidated capture
// and records every call that would invalidate one. For each row of the refusal table: a refused
// call throws a streamlike::error naming itself and saying the stream is capturing, a working call
// answers; and either way no call that would invalidate the capture reached CUDA, and the capture
// is as it was. The GPU suite checks the same table against the real driver
// (test/gpu/capture_safety.cu, capture_ordering.cu, capture_scope.cu, capture_retain.cu).
#include "../fake_cuda/fake_cuda.h"
#include "fake_cuda_support.hpp"

#include <streamlike/capture.hpp>
#include <streamlike/device_guard.hpp>
#include <streamlike/event.hpp>
#include <streamlike/graph.hpp>
#include <streamlike/ordering.hpp>
#include <streamlike/owned_stream.hpp>
#include <streamlike/retain_until_done.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_pool.hpp>
#include <streamlike/stream_view.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

namespace {

using host_test::new_stream;
using host_test::invalidations;

using streamlike::shared_stream;
using streamlike::stream_view;
using streamlike::unique_stream;

enum class outcome { works, refuses };

struct capture_case {
  int status; // fake_cuda_active or fake_cuda_invalidated
  int mode;   // cudaStreamCaptureMode
  const char* name;
};

constexpr capture_case active_modes[] = {
    {fake_cuda_active, cudaStreamCaptureModeGlobal, "an active global"},
    {fake_cuda_active, cudaStreamCaptureModeThreadLocal, "an active thread-local"},
    {fake_cuda_active, cudaStreamCaptureModeRelaxed, "an active relaxed"},
};
constexpr capture_case every_capture[] = {
    active_modes[0],
    active_modes[1],
    active_modes[2],
    {fake_cuda_invalidated, cudaStreamCaptureModeGlobal, "an invalidated global"},
    {fake_cuda_invalidated, cudaStreamCaptureModeRelaxed, "an invalidated relaxed"},
};
constexpr capture_case invalidated_captures[] = {every_capture[3], every_capture[4]};

// The check: `op` runs on `stream` while it is in the capture `c`. It must work or refuse as
// `expected` (a refusal names `name`, says "capturing" and has the code `refusal_code`); no call
// that invalidates a capture may reach CUDA; and the capture must be as it was.
void check_on(cudaStream_t stream, const char* name, outcome expected, const capture_case& c,
              const std::function<void(cudaStream_t)>& op,
              cudaError_t refusal_code = cudaErrorStreamCaptureUnsupported) {
  INFO(std::string(name), " on a stream in ", std::string(c.name), " capture");
  REQUIRE(fake_cuda_set_capture(stream, c.status, c.mode) == 0);
  fake_cuda_reset_log();
  bool refused = false;
  std::string message;
  cudaError_t code = cudaSuccess;
  try {
    op(stream);
  } catch (const streamlike::error& e) {
    refused = true;
    message = e.what();
    code = e.code();
  }
  CHECK_MESSAGE(fake_cuda_invalidations() == 0, "calls that invalidate a capture reached CUDA: ", invalidations());
  CHECK_MESSAGE(fake_cuda_capture_status(stream) == c.status, "the capture changed (", message, ")");
  CHECK_MESSAGE(refused == (expected == outcome::refuses), "refused: ", refused, ", message: ", message);
  if (refused) {
    CHECK_MESSAGE(message.find(name) != std::string::npos, message);
    CHECK_MESSAGE(message.find("capturing") != std::string::npos, message);
    CHECK(code == refusal_code);
  }
  REQUIRE(fake_cuda_set_capture(stream, fake_cuda_none, 0) == 0);
}

// The check on a new stream, in every capture of `cases`.
template <std::size_t N>
void check(const char* name, outcome expected, const capture_case (&cases)[N],
           const std::function<void(cudaStream_t)>& op, cudaError_t refusal_code = cudaErrorStreamCaptureUnsupported) {
  for (const capture_case& c : cases) {
    const cudaStream_t stream = new_stream();
    check_on(stream, name, expected, c, op, refusal_code);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
  }
}

// An owner of `stream` dropped (`drop`) while the stream is in the capture `c`: no call that
// invalidates a capture, the stream destroyed.
void check_destroy(const char* name, cudaStream_t stream, const capture_case& c, const std::function<void()>& drop) {
  INFO(std::string(name), " in ", std::string(c.name), " capture");
  REQUIRE(fake_cuda_set_capture(stream, c.status, c.mode) == 0);
  fake_cuda_reset_log();
  drop();
  CHECK_MESSAGE(fake_cuda_invalidations() == 0, "calls that invalidate a capture reached CUDA: ", invalidations());
  // the runtime's destroy, or the driver's where the stream's context is current
  CHECK(fake_cuda_calls("cudaStreamDestroy") + fake_cuda_calls("cuStreamDestroy") == 1);
  CHECK(fake_cuda_capture_status(stream) == -1); // gone
}

} // namespace

TEST_CASE("this program's CUDA is the fake, and libstreamlike's calls reach it") {
  REQUIRE(fake_cuda_present() == 1);
  fake_cuda_reset_log();
  const long live = fake_cuda_live_streams();
  {
    const unique_stream u = unique_stream::create({.non_blocking = true});
    CHECK(fake_cuda_live_streams() == live + 1);
    CHECK(fake_cuda_calls("cuStreamCreateWithPriority") == 1); // the driver's, in the current context
    CHECK_FALSE(u.is_capturing());
    CHECK(fake_cuda_calls("cuStreamIsCapturing") == 1); // the driver's, through the entry-point query
  }
  CHECK(fake_cuda_live_streams() == live);
  CHECK(fake_cuda_calls("cuStreamDestroy") == 1);
}

TEST_CASE("the fake invalidates a capture as CUDA does, so the checks below can see it") {
  const cudaStream_t stream = new_stream();
  REQUIRE(fake_cuda_set_capture(stream, fake_cuda_active, cudaStreamCaptureModeRelaxed) == 0);
  fake_cuda_reset_log();
  unsigned long long id = 0;
  CHECK(cudaStreamGetId(stream, &id) != cudaSuccess);
  (void)cudaGetLastError();
  CHECK(fake_cuda_invalidations() == 1);
  CHECK(fake_cuda_capture_status(stream) == fake_cuda_invalidated);
  // And a stream_view query that skipped its check would be seen.
  REQUIRE(fake_cuda_set_capture(stream, fake_cuda_none, 0) == 0);
  REQUIRE(fake_cuda_set_capture(stream, fake_cuda_active, cudaStreamCaptureModeGlobal) == 0);
  fake_cuda_reset_log();
  CHECK(cudaStreamSynchronize(stream) != cudaSuccess);
  (void)cudaGetLastError();
  CHECK(std::string(invalidations()) == "cudaStreamSynchronize");
  REQUIRE(fake_cuda_set_capture(stream, fake_cuda_none, 0) == 0);
  CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("stream_view on a capturing stream: device and priority answer, id, flags, is_done and sync refuse") {
  check("stream_view::device", outcome::works, active_modes,
        [](cudaStream_t s) { CHECK(stream_view{s}.device() == 0); });
  check("stream_view::priority", outcome::works, active_modes, [](cudaStream_t s) { (void)stream_view{s}.priority(); });
  check("stream_view::id", outcome::refuses, every_capture, [](cudaStream_t s) { (void)stream_view{s}.id(); });
  check("stream_view::flags", outcome::refuses, every_capture, [](cudaStream_t s) { (void)stream_view{s}.flags(); });
  check("stream_view::is_done", outcome::refuses, every_capture,
        [](cudaStream_t s) { (void)stream_view{s}.is_done(); });
  check("stream_view::sync", outcome::refuses, every_capture, [](cudaStream_t s) { stream_view{s}.sync(); });
  check("stream_view::is_capturing", outcome::works, every_capture,
        [](cudaStream_t s) { CHECK(stream_view{s}.is_capturing()); });
  check("stream_view::capture_info", outcome::works, active_modes, [](cudaStream_t s) {
    const streamlike::capture_state state = stream_view{s}.capture_info();
    CHECK(state.status == streamlike::capture_status::active);
    CHECK(state.id != 0);
    CHECK(state.graph != nullptr);
  });
  check("stream_view::capture_info", outcome::works, every_capture, [](cudaStream_t s) {
    CHECK(stream_view{s}.capture_info().status == static_cast<streamlike::capture_status>(fake_cuda_capture_status(s)));
  });
  check("device_guard", outcome::works, active_modes, [](cudaStream_t s) { const streamlike::device_guard on(s); });
}

TEST_CASE("the per-thread default stream, capturing: device answers for the current device, id refuses") {
  for (const capture_case& c : every_capture) {
    check_on(cudaStreamPerThread, "stream_view::device", outcome::works, c,
             [](cudaStream_t s) { CHECK(stream_view{s}.device() == 0); });
    check_on(cudaStreamPerThread, "stream_view::id", outcome::refuses, c,
             [](cudaStream_t s) { (void)stream_view{s}.id(); });
    check_on(cudaStreamPerThread, "stream_view::sync", outcome::refuses, c,
             [](cudaStream_t s) { stream_view{s}.sync(); });
  }
}

TEST_CASE("a keep-alive shared_stream first asked while capturing: device and priority answer, the rest refuse") {
  check("shared_stream::device", outcome::works, active_modes,
        [](cudaStream_t s) { CHECK(shared_stream::keep_alive(s, 0).device() == 0); });
  check("shared_stream::priority", outcome::works, active_modes,
        [](cudaStream_t s) { (void)shared_stream::keep_alive(s, 0).priority(); });
  check("shared_stream::id", outcome::refuses, every_capture,
        [](cudaStream_t s) { (void)shared_stream::keep_alive(s, 0).id(); });
  check("shared_stream::flags", outcome::refuses, every_capture,
        [](cudaStream_t s) { (void)shared_stream::keep_alive(s, 0).flags(); });
  check("shared_stream::is_done", outcome::refuses, every_capture,
        [](cudaStream_t s) { (void)shared_stream::keep_alive(s, 0).is_done(); });
  check("shared_stream::sync", outcome::refuses, every_capture,
        [](cudaStream_t s) { shared_stream::keep_alive(s, 0).sync(); });
  check("shared_stream::record", outcome::works, active_modes,
        [](cudaStream_t s) { (void)shared_stream::keep_alive(s, 0).record(); });
  check("shared_stream::is_capturing", outcome::works, every_capture,
        [](cudaStream_t s) { CHECK(shared_stream::keep_alive(s, 0).is_capturing()); });
  check("shared_stream::wait", outcome::works, active_modes, [](cudaStream_t s) {
    const shared_stream k = shared_stream::keep_alive(s, 0);
    streamlike::event e = k.record();
    k.wait(e.get()); // an event of the same capture
    k.wait(k);       // the same stream: a no-op
  });
  check("shared_stream::adopt", outcome::refuses, every_capture, [](cudaStream_t s) {
    // Refused, so the stream is not owned; were it adopted, leak it rather than destroy it twice.
    (void)new shared_stream(shared_stream::adopt(s));
  });
  // from_owner hands a releasing owner to adopt(), whose refusal names adopt.
  check("shared_stream::adopt", outcome::refuses, every_capture, [](cudaStream_t s) {
    unique_stream owner = unique_stream::adopt(s);
    try {
      (void)new shared_stream(shared_stream::from_owner(std::move(owner)));
    } catch (...) {
      (void)owner.release(); // the test's stream, destroyed by check()
      throw;
    }
  });
}

TEST_CASE("a created shared_stream answers every query from its cache while capturing, and drops quietly") {
  for (const capture_case& c : every_capture) {
    const shared_stream s = shared_stream::create({.non_blocking = true});
    const unsigned long long id = s.id();
    check_on(s.get(), "shared_stream (created) queries", outcome::works, c, [&](cudaStream_t) {
      CHECK(s.id() == id);
      CHECK(s.flags() == cudaStreamNonBlocking);
      CHECK(s.device() == 0);
      (void)s.priority();
      CHECK(s.is_capturing());
      const streamlike::shared_stream copy = s;                           // one atomic increment, no CUDA call
      streamlike_owned_stream* owned = streamlike::to_owned_stream(copy); // no CUDA call either
      CHECK(owned->stream_id == id);
      owned->deleter(owned);
    });
    check_on(s.get(), "shared_stream::is_done", outcome::refuses, c, [&](cudaStream_t) { (void)s.is_done(); });
    check_on(s.get(), "shared_stream::sync", outcome::refuses, c, [&](cudaStream_t) { s.sync(); });
  }
  // The last reference dropped while the stream captures: destroyed without a device query.
  for (const capture_case& c : every_capture) {
    auto* s = new shared_stream(shared_stream::create({.non_blocking = true}));
    check_destroy("destroying a shared_stream", s->get(), c, [&] { delete s; });
  }
}

TEST_CASE("unique_stream on a capturing stream") {
  for (const capture_case& c : every_capture) {
    const unique_stream u = unique_stream::create({.non_blocking = true});
    check_on(u.get(), "unique_stream::is_done", outcome::refuses, c, [&](cudaStream_t) { (void)u.is_done(); });
    check_on(u.get(), "unique_stream::sync", outcome::refuses, c, [&](cudaStream_t) { u.sync(); });
    check_on(u.get(), "unique_stream::is_capturing", outcome::works, c, [&](cudaStream_t) {
      CHECK(u.is_capturing());
      CHECK(u.capture_info().status == static_cast<streamlike::capture_status>(c.status));
    });
  }
  for (const capture_case& c : active_modes) {
    const unique_stream u = unique_stream::create({.non_blocking = true});
    check_on(u.get(), "unique_stream::record", outcome::works, c, [&](cudaStream_t) {
      streamlike::event e = u.record();
      u.wait(e.get());
      u.wait(u);
    });
  }
  // Destroyed while capturing: through the context, never cudaStreamGetDevice.
  for (const capture_case& c : every_capture) {
    auto* u = new unique_stream(unique_stream::create({.non_blocking = true}));
    check_destroy("destroying a unique_stream", u->get(), c, [&] { delete u; });
  }
  // ... and where another device is current, so that the driver's destroy in the current context
  // does not apply: the runtime's, on the device found through the context.
  fake_cuda_set_devices(2);
  for (const capture_case& c : every_capture) {
    auto* u = new unique_stream(unique_stream::create({.non_blocking = true}));
    check_destroy("destroying a unique_stream where another device is current", u->get(), c, [&] {
      REQUIRE(cudaSetDevice(1) == cudaSuccess);
      delete u;
      REQUIRE(cudaSetDevice(0) == cudaSuccess);
    });
    CHECK(fake_cuda_calls("cudaStreamDestroy") == 1);
  }
  fake_cuda_set_devices(1);
}

TEST_CASE("events and ordering on a capturing stream") {
  check("streamlike::record", outcome::works, active_modes,
        [](cudaStream_t s) { CHECK(static_cast<bool>(streamlike::record(stream_view{s}))); });
  check("event::record", outcome::works, active_modes, [](cudaStream_t s) { streamlike::event::create().record(s); });
  check("streamlike::wait", outcome::works, active_modes, [](cudaStream_t s) { streamlike::wait(s, s); });
  // A capturing consumer and a producer outside the capture: refused, CUDA's isolation code.
  check(
      "stream_view::wait", outcome::refuses, active_modes,
      [](cudaStream_t s) {
        const unique_stream outside = unique_stream::create({.non_blocking = true});
        stream_view{s}.wait(outside.get());
      },
      cudaErrorStreamCaptureIsolation);
  // An invalidated consumer: refused whatever the producer.
  check("stream_view::wait", outcome::refuses, invalidated_captures, [](cudaStream_t s) {
    const unique_stream outside = unique_stream::create({.non_blocking = true});
    stream_view{s}.wait(outside.get());
  });
  // A fork: a stream outside the capture waits on the capturing one and joins it; and back.
  check("streamlike::wait (fork and join)", outcome::works, active_modes, [](cudaStream_t s) {
    const unique_stream side = unique_stream::create({.non_blocking = true});
    streamlike::wait(side, s);
    CHECK(side.is_capturing());
    streamlike::wait(s, side);
    REQUIRE(fake_cuda_set_capture(side.get(), fake_cuda_none, 0) == 0);
  });
}

TEST_CASE("capture_scope and graph_exec on a capturing stream") {
  check("capture_scope::begin", outcome::refuses, every_capture,
        [](cudaStream_t s) { (void)streamlike::capture_scope::begin(s); });
  const streamlike::graph_exec exec = streamlike::graph::create().instantiate();
  check("graph_exec::launch", outcome::refuses, every_capture, [&](cudaStream_t s) { exec.launch(s); });
  check("graph_exec::upload", outcome::refuses, every_capture, [&](cudaStream_t s) { exec.upload(s); });
}

TEST_CASE("retain_until_done: in an active capture the graph keeps the object; an invalidated one refuses") {
  struct counted {
    std::shared_ptr<std::atomic<int>> destroyed;
    explicit counted(std::shared_ptr<std::atomic<int>> d) : destroyed(std::move(d)) {}
    counted(counted&&) noexcept = default;
    ~counted() {
      if (destroyed) ++*destroyed;
    }
  };
  for (const capture_case& c : active_modes) {
    auto destroyed = std::make_shared<std::atomic<int>>(0);
    const cudaStream_t stream = new_stream();
    check_on(stream, "streamlike::retain_until_done", outcome::works, c,
             [&](cudaStream_t s) { streamlike::retain_until_done(s, counted(destroyed)); });
    CHECK(fake_cuda_calls("cudaGraphRetainUserObject") == 1);
    // check_on() ended the capture without keeping its graph: the object is released.
    streamlike::detail::flush_released_objects();
    CHECK(*destroyed == 1);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
  }
  for (const capture_case& c : invalidated_captures) {
    auto destroyed = std::make_shared<std::atomic<int>>(0);
    const cudaStream_t stream = new_stream();
    check_on(stream, "retain_until_done", outcome::refuses, c,
             [&](cudaStream_t s) { streamlike::retain_until_done(s, counted(destroyed)); });
    CHECK(*destroyed == 1); // destroyed before the exception left
    CHECK(fake_cuda_calls("cudaLaunchHostFunc") == 0);
    CHECK(fake_cuda_calls("cudaUserObjectCreate") == 0);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
  }
}

TEST_CASE("stream_pool: get() asks nothing, get_non_capturing() skips a capturing stream") {
  streamlike::stream_pool pool(2, {.non_blocking = true});
  for (const capture_case& c : every_capture) {
    check_on(pool.at(0).get(), "stream_pool::get_non_capturing", outcome::works, c, [&](cudaStream_t) {
      for (int i = 0; i < 4; ++i) CHECK(pool.get_non_capturing() == pool.at(1));
      (void)pool.get();
      REQUIRE(fake_cuda_set_capture(pool.at(1).get(), c.status, c.mode) == 0);
      try {
        (void)pool.get_non_capturing();
        FAIL("every pool stream captures: expected a refusal");
      } catch (const streamlike::error& e) {
        CHECK(std::string(e.what()).find("stream_pool::get_non_capturing") != std::string::npos);
      }
      REQUIRE(fake_cuda_set_capture(pool.at(1).get(), fake_cuda_none, 0) == 0);
    });
  }
}
