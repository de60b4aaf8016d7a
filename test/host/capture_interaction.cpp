// The calls a capture prohibits as potentially unsafe (docs/cuda-graphs.md, "Calls a capture
// prohibits"), checked without a GPU against the fake CUDA of test/fake_cuda (fake_cuda.h),
// which invalidates a capture wherever CUDA would (test/host/fake_cuda_rules.cpp). One table:
// each call (event sync/query/elapsed time, stream sync/query of a stream outside the capture) x
// the capture's mode x who captures x the calling thread's interaction mode -> refused by name
// (the capture untouched), allowed (CUDA allows it; the capture untouched), or passed to CUDA,
// which invalidates the capture (the case streamlike cannot see, pinned here). The GPU suite runs
// the same table against CUDA (test/gpu/capture_interaction.cu).
#include "../fake_cuda/fake_cuda.h"
#include "fake_cuda_support.hpp"

#include <streamlike/capture.hpp>
#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/error.hpp>
#include <streamlike/event.hpp>
#include <streamlike/graph.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace {

using host_test::new_stream;
using host_test::invalidations;

using streamlike::capture_mode;
using streamlike::capture_scope;
using streamlike::event;
using streamlike::stream_view;

unsigned long long capture_id(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  REQUIRE(cudaStreamGetCaptureInfo(s, &status, &id) == cudaSuccess);
  return id;
}

// The objects the calls work on: none of them in the capture.
struct outside {
  cudaStream_t idle = new_stream();
  streamlike::shared_stream owner = streamlike::shared_stream::create({.non_blocking = true});
  streamlike::unique_stream unique = streamlike::unique_stream::create({.non_blocking = true});
  event before = streamlike::record(idle, {.timing = true});
  event later = streamlike::record(idle, {.timing = true});
  outside() = default;
  outside(const outside&) = delete;
  outside& operator=(const outside&) = delete;
  ~outside() { (void)cudaStreamDestroy(idle); }
};

struct call_case {
  const char* name; // what the refusal names
  std::function<void(outside&)> make;
};

const call_case calls[] = {
    {"event::sync", [](outside& o) { o.before.sync(); }},
    {"event::is_done", [](outside& o) { (void)o.before.is_done(); }},
    {"streamlike::elapsed_ms", [](outside& o) { (void)streamlike::elapsed_ms(o.before, o.later); }},
    {"stream_view::sync", [](outside& o) { stream_view{o.idle}.sync(); }},
    {"stream_view::is_done", [](outside& o) { (void)stream_view{o.idle}.is_done(); }},
    {"shared_stream::sync", [](outside& o) { o.owner.sync(); }},
    {"shared_stream::is_done", [](outside& o) { (void)o.owner.is_done(); }},
    {"unique_stream::sync", [](outside& o) { o.unique.sync(); }},
};

// Who began the capture of `stream`, and how this thread sees it.
enum class who {
  scope_here,           // capture_scope on this thread
  scope_here_current,   // the same, its stream also this thread's current stream
  scope_elsewhere,      // capture_scope on another thread
  framework_current,    // cudaStreamBeginCapture on this thread, the stream made current (torch, CuPy)
  framework_provider,   // the same, the stream named by a registered framework provider
  framework_not_current // cudaStreamBeginCapture on this thread, the stream not current: unseen
};

const char* who_name(who w) {
  switch (w) {
    case who::scope_here: return "a capture_scope of this thread";
    case who::scope_here_current: return "a capture_scope of this thread, its stream current";
    case who::scope_elsewhere: return "a capture_scope of another thread";
    case who::framework_current: return "a framework's capture, its stream current (scoped_current_stream)";
    case who::framework_provider: return "a framework's capture, its stream current in the framework's provider";
    case who::framework_not_current: return "a framework's capture, its stream not current";
  }
  return "?";
}

// A framework's provider (as CuPy's): names `current` on every device.
std::atomic<void*> provider_stream{nullptr};
int provider_get(void*, std::int32_t, void** stream) {
  *stream = provider_stream.load();
  return STREAMLIKE_CURRENT_STREAM_OK;
}

// A capture under way on `stream`, begun as `w` says, in `mode`; ended (on its own thread) with
// the object. end() hands over the graph's node count check: the capture ends cleanly.
class capture_under_way {
public:
  capture_under_way(cudaStream_t stream, who w, int mode) : stream_(stream), who_(w) {
    const auto m = static_cast<capture_mode>(mode);
    switch (w) {
      case who::scope_here: scope_.emplace(capture_scope::begin(stream, m)); break;
      case who::scope_here_current:
        scope_.emplace(capture_scope::begin(stream, m));
        current_ = std::make_unique<streamlike::scoped_current_stream>(stream_view{stream});
        break;
      case who::scope_elsewhere:
        other_ = std::thread([this, m] {
          std::optional<capture_scope> scope(capture_scope::begin(stream_, m));
          began_ = true;
          while (!end_now_) std::this_thread::yield();
          ended_ok_ = static_cast<bool>(scope->end());
        });
        while (!began_) std::this_thread::yield();
        break;
      case who::framework_current:
        REQUIRE(cudaStreamBeginCapture(stream, static_cast<cudaStreamCaptureMode>(mode)) == cudaSuccess);
        current_ = std::make_unique<streamlike::scoped_current_stream>(stream_view{stream});
        break;
      case who::framework_provider: {
        REQUIRE(cudaStreamBeginCapture(stream, static_cast<cudaStreamCaptureMode>(mode)) == cudaSuccess);
        streamlike_current_stream_provider p = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;
        p.name = "test framework";
        p.priority = 300;
        p.get = &provider_get;
        provider_stream = stream;
        streamlike::register_current_stream_provider(p);
        break;
      }
      case who::framework_not_current:
        REQUIRE(cudaStreamBeginCapture(stream, static_cast<cudaStreamCaptureMode>(mode)) == cudaSuccess);
        break;
    }
  }
  capture_under_way(const capture_under_way&) = delete;
  capture_under_way& operator=(const capture_under_way&) = delete;
  ~capture_under_way() {
    if (!ended_) (void)end(); // a failed REQUIRE left it running
  }

  /// Ends the capture; true if it ended with a graph (it was not invalidated).
  bool end() {
    ended_ = true;
    current_.reset();
    if (who_ == who::framework_provider) {
      (void)streamlike::unregister_current_stream_provider("test framework");
      provider_stream = nullptr;
    }
    if (scope_) {
      try {
        return static_cast<bool>(scope_->end());
      } catch (const streamlike::error&) {
        return false;
      }
    }
    if (who_ == who::scope_elsewhere) {
      end_now_ = true;
      other_.join();
      return ended_ok_;
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t code = cudaStreamEndCapture(stream_, &graph);
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    return code == cudaSuccess;
  }

private:
  cudaStream_t stream_;
  who who_;
  std::optional<capture_scope> scope_;
  std::unique_ptr<streamlike::scoped_current_stream> current_;
  std::thread other_;
  std::atomic<bool> began_{false};
  std::atomic<bool> end_now_{false};
  std::atomic<bool> ended_ok_{false};
  bool ended_ = false;
};

// Sets the calling thread's capture interaction mode for the scope.
struct interaction_mode {
  cudaStreamCaptureMode previous;
  explicit interaction_mode(int mode) : previous(static_cast<cudaStreamCaptureMode>(mode)) {
    REQUIRE(cudaThreadExchangeStreamCaptureMode(&previous) == cudaSuccess);
  }
  interaction_mode(const interaction_mode&) = delete;
  interaction_mode& operator=(const interaction_mode&) = delete;
  ~interaction_mode() { (void)cudaThreadExchangeStreamCaptureMode(&previous); }
};

enum class outcome {
  refused,     // streamlike refuses by name; the capture goes on
  allowed,     // the call is made and CUDA allows it; the capture goes on
  invalidates, // streamlike cannot see the capture: the call reaches CUDA, which invalidates it
};

// R, A, X per capture mode (global, thread-local, relaxed).
struct row {
  who by;
  outcome in_global, in_thread_local, in_relaxed;
};

void check(const call_case& c, who by, int mode, int thread_mode, outcome expected) {
  const char* mode_names[] = {"global", "thread-local", "relaxed"};
  INFO(c.name, " during ", who_name(by), " in ", mode_names[mode], " mode; this thread in ", mode_names[thread_mode],
       " interaction mode");
  outside o;
  const cudaStream_t capturing = new_stream();
  capture_under_way capture(capturing, by, mode);
  const unsigned long long id = capture_id(capturing);
  REQUIRE(id != 0);
  bool refused = false;
  std::string message;
  cudaError_t code = cudaSuccess;
  {
    const interaction_mode set(thread_mode);
    fake_cuda_reset_log();
    try {
      c.make(o);
    } catch (const streamlike::error& e) {
      refused = true;
      message = e.what();
      code = e.code();
    }
  }
  switch (expected) {
    case outcome::refused:
      CHECK_MESSAGE(refused, "not refused");
      CHECK(code == cudaErrorStreamCaptureUnsupported);
      CHECK_MESSAGE(message.find(c.name) != std::string::npos, message);
      CHECK_MESSAGE(message.find("capture id " + std::to_string(id)) != std::string::npos, message);
      CHECK_MESSAGE(fake_cuda_invalidations() == 0, "reached CUDA: ", invalidations());
      CHECK(fake_cuda_capture_status(capturing) == fake_cuda_active);
      break;
    case outcome::allowed:
      CHECK_MESSAGE(!refused, message);
      CHECK_MESSAGE(fake_cuda_invalidations() == 0, "reached CUDA: ", invalidations());
      CHECK(fake_cuda_capture_status(capturing) == fake_cuda_active);
      break;
    case outcome::invalidates:
      CHECK_MESSAGE(fake_cuda_invalidations() == 1, "invalidations: ", invalidations());
      CHECK(fake_cuda_capture_status(capturing) == fake_cuda_invalidated);
      break;
  }
  CHECK(capture.end() == (expected != outcome::invalidates));
  CHECK(cudaStreamDestroy(capturing) == cudaSuccess);
}

void check_table(int thread_mode, const row (&table)[6]) {
  for (const call_case& c : calls) {
    for (const row& r : table) {
      check(c, r.by, cudaStreamCaptureModeGlobal, thread_mode, r.in_global);
      check(c, r.by, cudaStreamCaptureModeThreadLocal, thread_mode, r.in_thread_local);
      check(c, r.by, cudaStreamCaptureModeRelaxed, thread_mode, r.in_relaxed);
    }
  }
}

constexpr outcome R = outcome::refused;
constexpr outcome A = outcome::allowed;
constexpr outcome X = outcome::invalidates;

} // namespace

TEST_CASE("this program's CUDA is the fake") { REQUIRE(fake_cuda_present() == 1); }

TEST_CASE("potentially unsafe calls from a thread in global interaction mode (CUDA's default)") {
  constexpr row table[] = {
      {who::scope_here, R, R, A},
      {who::scope_here_current, R, R, A},
      {who::scope_elsewhere, R, A, A},
      // The mode of a capture streamlike did not begin cannot be asked: taken for global.
      {who::framework_current, R, R, R},
      {who::framework_provider, R, R, R},
      // Not seen: CUDA judges, and invalidates as it prohibits (docs/cuda-graphs.md).
      {who::framework_not_current, X, X, A},
  };
  check_table(cudaStreamCaptureModeGlobal, table);
}

TEST_CASE("potentially unsafe calls from a thread in thread-local interaction mode") {
  constexpr row table[] = {
      {who::scope_here, R, R, A},        {who::scope_here_current, R, R, A}, {who::scope_elsewhere, A, A, A},
      {who::framework_current, R, R, R}, {who::framework_provider, R, R, R}, {who::framework_not_current, X, X, A},
  };
  check_table(cudaStreamCaptureModeThreadLocal, table);
}

TEST_CASE("potentially unsafe calls from a thread in relaxed interaction mode: CUDA allows them all") {
  constexpr row table[] = {
      {who::scope_here, A, A, A},        {who::scope_here_current, A, A, A}, {who::scope_elsewhere, A, A, A},
      {who::framework_current, A, A, A}, {who::framework_provider, A, A, A}, {who::framework_not_current, A, A, A},
  };
  check_table(cudaStreamCaptureModeRelaxed, table);
}

TEST_CASE("the capturing stream's own sync and is_done are refused in every mode, whoever captures") {
  for (const int mode : {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed}) {
    for (const who by : {who::scope_here, who::framework_current, who::framework_not_current}) {
      const cudaStream_t capturing = new_stream();
      capture_under_way capture(capturing, by, mode);
      const interaction_mode set(cudaStreamCaptureModeRelaxed); // nothing prohibited as unsafe
      fake_cuda_reset_log();
      CHECK_THROWS_WITH_AS(stream_view{capturing}.sync(), doctest::Contains("stream_view::sync"), streamlike::error);
      CHECK_THROWS_WITH_AS((void)stream_view{capturing}.is_done(), doctest::Contains("stream_view::is_done"),
                           streamlike::error);
      CHECK(fake_cuda_invalidations() == 0);
      CHECK(capture.end());
      CHECK(cudaStreamDestroy(capturing) == cudaSuccess);
    }
  }
}

TEST_CASE("no capture under way: the checks ask CUDA nothing but the current device") {
  outside o;
  fake_cuda_reset_log();
  o.before.sync();
  (void)o.before.is_done();
  for (std::size_t i = 0; const char* name = fake_cuda_called(i); ++i) {
    INFO(name);
    CHECK((std::string(name) == "cudaEventSynchronize" || std::string(name) == "cudaEventQuery" ||
           std::string(name) == "cuCtxGetDevice"));
  }
  // A current stream that is not a default one costs one capture-status query.
  const streamlike::scoped_current_stream current{stream_view{o.idle}};
  fake_cuda_reset_log();
  o.before.sync();
  CHECK(fake_cuda_calls("cuStreamIsCapturing") == 1);
  CHECK(fake_cuda_calls("cuThreadExchangeStreamCaptureMode") == 0);
}

TEST_CASE("a moved capture_scope: the moved-from one is inactive, the moved-to one still ends the capture") {
  const cudaStream_t s = new_stream();
  outside o;
  std::optional<capture_scope> from(capture_scope::begin(s));
  REQUIRE(from->active());
  capture_scope to(std::move(*from));
  CHECK_FALSE(from->active());
  CHECK(to.active());
  CHECK(to.stream() == stream_view{s});
  // Destroying the moved-from scope ends nothing: the capture runs, and its calls are still refused.
  from.reset();
  CHECK(fake_cuda_capture_status(s) == fake_cuda_active);
  CHECK_THROWS_AS(o.before.sync(), streamlike::error);
  // The moved-to scope ends it, with a graph.
  fake_cuda_reset_log();
  streamlike::graph g = to.end();
  CHECK(g);
  CHECK_FALSE(to.active());
  CHECK(fake_cuda_calls("cudaStreamEndCapture") == 1);
  CHECK(fake_cuda_capture_status(s) == fake_cuda_none);
  CHECK_NOTHROW(o.before.sync()); // the capture is over: nothing is refused
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
}
