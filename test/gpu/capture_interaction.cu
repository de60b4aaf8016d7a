// The calls a capture prohibits as potentially unsafe (docs/cuda-graphs.md, "Calls a capture
// prohibits"), against CUDA: the table of test/host/capture_interaction.cpp (which runs it on the
// fake CUDA) on the GPU. Each call (event sync/query/elapsed time, stream sync/query of a stream
// outside the capture) x capture mode (global, thread-local, relaxed) x who captures (capture_scope
// on this thread, the same with its stream current, capture_scope on another thread, a capture
// begun with cudaStreamBeginCapture whose stream is current as torch.cuda.graph makes it) x the
// calling thread's interaction mode: refused by name, or allowed by CUDA. Either way the capture is
// still active after the call, and the graph, replayed 10 times, adds what it captured 10 times.
// (A capture streamlike cannot see, its stream not current, is left to CUDA: the host table pins
// that row; here it would only invalidate a capture.)
#include "capture_support.hpp"
#include "gpu_support.hpp"

#include <streamlike/capture.hpp>
#include <streamlike/current_stream.hpp>
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

using streamlike::capture_mode;
using streamlike::capture_scope;
using streamlike::event;
using streamlike::stream_view;

using gpu_test::add_kernel;

constexpr int replays = 10;

cudaStreamCaptureStatus status_of(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  GPU_REQUIRE_CUDA(cudaStreamIsCapturing(s, &status));
  return status;
}

unsigned long long capture_id(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  GPU_REQUIRE_CUDA(cudaStreamGetCaptureInfo(s, &status, &id));
  return id;
}

// The objects the calls work on, none of them in the capture: made, recorded and synchronized
// before it begins.
struct outside {
  streamlike::shared_stream idle = streamlike::shared_stream::create({.non_blocking = true});
  streamlike::unique_stream unique = streamlike::unique_stream::create({.non_blocking = true});
  event before = streamlike::record(idle, {.timing = true});
  event later = streamlike::record(idle, {.timing = true});
  outside() { GPU_REQUIRE_CUDA(cudaStreamSynchronize(idle.get())); }
};

struct call_case {
  const char* name;
  std::function<void(outside&)> make;
};

// Each call's answer is taken before CHECK sees it: CHECK catches what its expression throws, and a
// refusal must reach check() below.
const call_case calls[] = {
    {"event::sync", [](outside& o) { o.before.sync(); }},
    {"event::is_done",
     [](outside& o) {
       const bool done = o.before.is_done();
       CHECK(done);
     }},
    {"streamlike::elapsed_ms",
     [](outside& o) {
       const float ms = streamlike::elapsed_ms(o.before, o.later);
       CHECK(ms >= 0.0f);
     }},
    {"stream_view::sync", [](outside& o) { o.idle.view().sync(); }},
    {"stream_view::is_done",
     [](outside& o) {
       const bool done = o.idle.view().is_done();
       CHECK(done);
     }},
    {"shared_stream::sync", [](outside& o) { o.idle.sync(); }},
    {"shared_stream::is_done",
     [](outside& o) {
       const bool done = o.idle.is_done();
       CHECK(done);
     }},
    {"unique_stream::sync", [](outside& o) { o.unique.sync(); }},
};

enum class who { scope_here, scope_here_current, scope_elsewhere, framework_current };

const char* who_name(who w) {
  switch (w) {
    case who::scope_here: return "a capture_scope of this thread";
    case who::scope_here_current: return "a capture_scope of this thread, its stream current";
    case who::scope_elsewhere: return "a capture_scope of another thread";
    case who::framework_current: return "cudaStreamBeginCapture, the stream current (as torch.cuda.graph)";
  }
  return "?";
}

// A capture of `stream` in `mode`, begun as `w` says, holding one add_kernel(counter, 1) before the
// call and one add_kernel(counter, 2) after it; end() returns the graph (on the capturing thread).
class capture_under_way {
public:
  capture_under_way(cudaStream_t stream, int* counter, who w, int mode)
      : stream_(stream), counter_(counter), who_(w), mode_(static_cast<capture_mode>(mode)) {
    if (w == who::scope_elsewhere) {
      other_ = std::thread([this] {
        std::optional<capture_scope> scope(capture_scope::begin(stream_, mode_));
        add_kernel<<<1, 1, 0, stream_>>>(counter_, 1);
        began_ = true;
        while (!end_now_) std::this_thread::yield();
        add_kernel<<<1, 1, 0, stream_>>>(counter_, 2);
        try {
          graph_ = scope->end().release();
        } catch (const streamlike::error&) {
          graph_ = nullptr;
        }
      });
      while (!began_) std::this_thread::yield();
      return;
    }
    if (w == who::framework_current) {
      GPU_REQUIRE_CUDA(cudaStreamBeginCapture(stream, static_cast<cudaStreamCaptureMode>(mode)));
    } else {
      scope_.emplace(capture_scope::begin(stream, mode_));
    }
    if (w != who::scope_here) current_ = std::make_unique<streamlike::scoped_current_stream>(stream_view{stream});
    add_kernel<<<1, 1, 0, stream>>>(counter, 1);
  }
  capture_under_way(const capture_under_way&) = delete;
  capture_under_way& operator=(const capture_under_way&) = delete;
  ~capture_under_way() {
    if (!ended_) {
      const cudaGraph_t g = end();
      if (g != nullptr) (void)cudaGraphDestroy(g);
    }
  }

  cudaGraph_t end() {
    ended_ = true;
    current_.reset();
    if (who_ == who::scope_elsewhere) {
      end_now_ = true;
      other_.join();
      return graph_;
    }
    add_kernel<<<1, 1, 0, stream_>>>(counter_, 2);
    if (scope_) {
      try {
        return scope_->end().release();
      } catch (const streamlike::error&) {
        return nullptr;
      }
    }
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(stream_, &graph) != cudaSuccess) (void)cudaGetLastError();
    return graph;
  }

private:
  cudaStream_t stream_;
  int* counter_;
  who who_;
  capture_mode mode_;
  std::optional<capture_scope> scope_;
  std::unique_ptr<streamlike::scoped_current_stream> current_;
  std::thread other_;
  std::atomic<bool> began_{false};
  std::atomic<bool> end_now_{false};
  cudaGraph_t graph_ = nullptr;
  bool ended_ = false;
};

struct interaction_mode {
  cudaStreamCaptureMode previous;
  explicit interaction_mode(int mode) : previous(static_cast<cudaStreamCaptureMode>(mode)) {
    GPU_REQUIRE_CUDA(cudaThreadExchangeStreamCaptureMode(&previous));
  }
  interaction_mode(const interaction_mode&) = delete;
  interaction_mode& operator=(const interaction_mode&) = delete;
  ~interaction_mode() { (void)cudaThreadExchangeStreamCaptureMode(&previous); }
};

enum class outcome { refused, allowed };

struct row {
  who by;
  outcome in_global, in_thread_local, in_relaxed; // by the capture's mode
};

void check(const call_case& c, who by, int mode, int thread_mode, outcome expected) {
  const char* mode_names[] = {"global", "thread-local", "relaxed"};
  INFO(c.name, " during ", who_name(by), " in ", mode_names[mode], " mode; this thread in ", mode_names[thread_mode],
       " interaction mode");
  outside o;
  const streamlike::shared_stream s = streamlike::shared_stream::create({.non_blocking = true});
  gpu_test::mapped_ints counter(1);
  capture_under_way capture(s.get(), counter.device(), by, mode);
  const unsigned long long id = capture_id(s.get());
  REQUIRE(id != 0);
  std::string message;
  cudaError_t code = cudaSuccess;
  {
    const interaction_mode set(thread_mode);
    try {
      c.make(o);
    } catch (const streamlike::error& e) {
      message = e.what();
      code = e.code();
    }
  }
  if (expected == outcome::refused) {
    CHECK_MESSAGE(code == cudaErrorStreamCaptureUnsupported, "expected a refusal, got: ", cudaGetErrorName(code));
    CHECK_MESSAGE(message.find(c.name) != std::string::npos, message);
    CHECK_MESSAGE(message.find("capture id " + std::to_string(id)) != std::string::npos, message);
  } else {
    CHECK_MESSAGE(code == cudaSuccess, "expected CUDA to allow it, got: ", message);
  }
  CHECK(status_of(s.get()) == cudaStreamCaptureStatusActive);
  const cudaGraph_t graph = capture.end();
  REQUIRE_MESSAGE(graph != nullptr, "the capture ended without a graph (invalidated)");
  streamlike::graph_exec exec = streamlike::graph::adopt(graph).instantiate();
  for (int i = 0; i < replays; ++i) exec.launch(s);
  s.sync();
  CHECK(counter.read(0) == 3 * replays);
}

void check_table(int thread_mode, const row (&table)[4]) {
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

} // namespace

TEST_CASE("potentially unsafe calls from a thread in global interaction mode (CUDA's default)") {
  constexpr row table[] = {
      {who::scope_here, R, R, A},
      {who::scope_here_current, R, R, A},
      {who::scope_elsewhere, R, A, A},
      {who::framework_current, R, R, R}, // its mode cannot be asked: taken for global
  };
  check_table(cudaStreamCaptureModeGlobal, table);
}

TEST_CASE("potentially unsafe calls from a thread in thread-local interaction mode") {
  constexpr row table[] = {
      {who::scope_here, R, R, A},
      {who::scope_here_current, R, R, A},
      {who::scope_elsewhere, A, A, A},
      {who::framework_current, R, R, R},
  };
  check_table(cudaStreamCaptureModeThreadLocal, table);
}

TEST_CASE("potentially unsafe calls from a thread in relaxed interaction mode: CUDA allows them all") {
  constexpr row table[] = {
      {who::scope_here, A, A, A},
      {who::scope_here_current, A, A, A},
      {who::scope_elsewhere, A, A, A},
      {who::framework_current, A, A, A},
  };
  check_table(cudaStreamCaptureModeRelaxed, table);
}
