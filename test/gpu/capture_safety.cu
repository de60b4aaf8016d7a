// No streamlike call invalidates a CUDA graph capture (docs/cuda-graphs.md). Each public function
// that takes or holds a stream is called on a stream capturing in each of CUDA's three modes
// (global, thread-local, relaxed): it works or refuses with a streamlike::error naming itself and
// saying the stream is capturing; either way the capture is still active afterwards
// (cudaStreamGetCaptureInfo), and the graph instantiates and replays the work captured around the
// call. Also: capture_info()/is_capturing() on the view and the owners, and
// stream_pool::get_non_capturing skipping a pool stream that a capture is using.
#include "capture_support.hpp"
#include "gpu_support.hpp"

#include <streamlike/capture.hpp>
#include <streamlike/capture_state.hpp>
#include <streamlike/event.hpp>
#include <streamlike/graph.hpp>
#include <streamlike/ordering.hpp>
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
#include <utility>
#include <vector>

namespace {

using streamlike::shared_stream;
using streamlike::stream_view;
using streamlike::unique_stream;

using gpu_test::add_kernel;
using gpu_test::mode_case;
using gpu_test::modes;

enum class outcome { works, refuses };

// The check: `op` runs on `stream` while it captures in `mode`, between two captured kernels
// (+1 and +2 to a counter). It must work or refuse as `expected` (a refusal names `name` and says
// "capturing"); the capture must still be active after it; and three replays of the graph must
// leave the counter at 9.
void check_under_capture(const char* name, outcome expected, cudaStream_t stream, const mode_case& mode,
                         const std::function<void(cudaStream_t)>& op) {
  INFO(name, " in ", mode.name, " capture");
  gpu_test::mapped_ints counter(1);
  GPU_REQUIRE_CUDA(cudaStreamBeginCapture(stream, mode.mode));
  add_kernel<<<1, 1, 0, stream>>>(counter.device(), 1);
  bool refused = false;
  std::string message;
  try {
    op(stream);
  } catch (const streamlike::error& e) {
    refused = true;
    message = e.what();
  }
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  GPU_REQUIRE_CUDA(cudaStreamGetCaptureInfo(stream, &status));
  CHECK_MESSAGE(status == cudaStreamCaptureStatusActive, "the capture was invalidated (", message, ")");
  add_kernel<<<1, 1, 0, stream>>>(counter.device(), 2);
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  CHECK_MESSAGE(ended == cudaSuccess, cudaGetErrorName(ended));
  if (ended == cudaSuccess) {
    cudaGraphExec_t exec = nullptr;
    GPU_REQUIRE_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < 3; ++i) GPU_REQUIRE_CUDA(cudaGraphLaunch(exec, stream));
    GPU_REQUIRE_CUDA(cudaStreamSynchronize(stream));
    CHECK(counter.read(0) == 9);
    GPU_REQUIRE_CUDA(cudaGraphExecDestroy(exec));
    GPU_REQUIRE_CUDA(cudaGraphDestroy(graph));
  }
  (void)cudaGetLastError();
  CHECK_MESSAGE(refused == (expected == outcome::refuses), "refused: ", refused, " message: ", message);
  if (refused) {
    CHECK_MESSAGE(message.find(name) != std::string::npos, message);
    CHECK_MESSAGE(message.find("capturing") != std::string::npos, message);
  }
}

// Runs the check in every mode on a fresh non-blocking stream.
void check_every_mode(const char* name, outcome expected, const std::function<void(cudaStream_t)>& op) {
  for (const mode_case& mode : modes) {
    gpu_test::owned_stream stream;
    check_under_capture(name, expected, stream.get(), mode, op);
  }
}

int current_device() {
  int device = -1;
  GPU_REQUIRE_CUDA(cudaGetDevice(&device));
  return device;
}

} // namespace

TEST_CASE("stream_view on a capturing stream: the queries that can answer do, the others refuse by name") {
  const int device = current_device();
  check_every_mode("stream_view::device", outcome::works,
                   [&](cudaStream_t s) { CHECK(stream_view{s}.device() == device); });
  check_every_mode("stream_view::priority", outcome::works, [](cudaStream_t s) { (void)stream_view{s}.priority(); });
  check_every_mode("stream_view::id", outcome::refuses, [](cudaStream_t s) { (void)stream_view{s}.id(); });
  check_every_mode("stream_view::flags", outcome::refuses, [](cudaStream_t s) { (void)stream_view{s}.flags(); });
  check_every_mode("stream_view::is_done", outcome::refuses, [](cudaStream_t s) { (void)stream_view{s}.is_done(); });
  check_every_mode("stream_view::sync", outcome::refuses, [](cudaStream_t s) { stream_view{s}.sync(); });
  check_every_mode("stream_view::is_capturing", outcome::works,
                   [](cudaStream_t s) { CHECK(stream_view{s}.is_capturing()); });
  check_every_mode("stream_view::capture_info", outcome::works, [](cudaStream_t s) {
    const streamlike::capture_state state = stream_view{s}.capture_info();
    CHECK(state.status == streamlike::capture_status::active);
    CHECK(state.is_capturing());
    CHECK(state.graph != nullptr);
    cudaStreamCaptureStatus raw = cudaStreamCaptureStatusNone;
    unsigned long long raw_id = 0;
    GPU_REQUIRE_CUDA(cudaStreamGetCaptureInfo(s, &raw, &raw_id));
    CHECK(state.id == raw_id);
  });
}

TEST_CASE("ordering and events on a capturing stream: record, wait on its own event, wait on itself") {
  check_every_mode("streamlike::record", outcome::works, [](cudaStream_t s) {
    streamlike::event e = streamlike::record(stream_view{s});
    CHECK(static_cast<bool>(e));
  });
  check_every_mode("stream_view::wait", outcome::works, [](cudaStream_t s) {
    streamlike::event e = streamlike::record(stream_view{s});
    stream_view{s}.wait(e.get()); // an event of the same capture
  });
  check_every_mode("streamlike::wait", outcome::works, [](cudaStream_t s) { streamlike::wait(s, s); });
  check_every_mode("event::record", outcome::works, [](cudaStream_t s) {
    streamlike::event e = streamlike::event::create();
    e.record(s);
  });
}

TEST_CASE("a keep-alive shared_stream first asked while capturing: device and priority answer, id and flags refuse") {
  const int device = current_device();
  // keep_alive makes no CUDA call; every first query happens inside the capture, as it does for a
  // Python argument inside torch.cuda.graph.
  check_every_mode("shared_stream::device", outcome::works, [&](cudaStream_t s) {
    const shared_stream k = shared_stream::keep_alive(s, 0);
    CHECK(k.device() == device);
    CHECK(k.device() == device); // asked twice: the cache stays unfilled, the answer the same
  });
  check_every_mode("shared_stream::priority", outcome::works,
                   [](cudaStream_t s) { (void)shared_stream::keep_alive(s, 0).priority(); });
  check_every_mode("shared_stream::id", outcome::refuses,
                   [](cudaStream_t s) { (void)shared_stream::keep_alive(s, 0).id(); });
  check_every_mode("shared_stream::flags", outcome::refuses,
                   [](cudaStream_t s) { (void)shared_stream::keep_alive(s, 0).flags(); });
  check_every_mode("shared_stream::record", outcome::works,
                   [](cudaStream_t s) { (void)shared_stream::keep_alive(s, 0).record(); });
  check_every_mode("shared_stream::is_done", outcome::refuses,
                   [](cudaStream_t s) { (void)shared_stream::keep_alive(s, 0).is_done(); });
  check_every_mode("shared_stream::sync", outcome::refuses,
                   [](cudaStream_t s) { shared_stream::keep_alive(s, 0).sync(); });
  check_every_mode("shared_stream::is_capturing", outcome::works,
                   [](cudaStream_t s) { CHECK(shared_stream::keep_alive(s, 0).is_capturing()); });
  check_every_mode("shared_stream::capture_info", outcome::works, [](cudaStream_t s) {
    CHECK(shared_stream::keep_alive(s, 0).capture_info().status == streamlike::capture_status::active);
  });
  check_every_mode("shared_stream::wait", outcome::works, [](cudaStream_t s) {
    const shared_stream k = shared_stream::keep_alive(s, 0);
    streamlike::event e = k.record();
    k.wait(e.get());
    k.wait(k); // the same stream: a no-op
  });
  check_every_mode("shared_stream::adopt", outcome::refuses, [](cudaStream_t s) {
    // Refused, so the stream is not owned; were it adopted, leak it rather than destroy it twice.
    (void)new shared_stream(shared_stream::adopt(s));
  });
}

TEST_CASE("the keep-alive's cache fills once the capture has ended") {
  gpu_test::owned_stream stream;
  const shared_stream k = shared_stream::keep_alive(stream.get(), 0);
  GPU_REQUIRE_CUDA(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeGlobal));
  CHECK(k.device() == current_device());
  cudaGraph_t graph = nullptr;
  GPU_REQUIRE_CUDA(cudaStreamEndCapture(stream.get(), &graph));
  GPU_REQUIRE_CUDA(cudaGraphDestroy(graph));
  CHECK(k.id() == gpu_test::stream_id(stream.get()));
  unsigned int flags = 0;
  GPU_REQUIRE_CUDA(cudaStreamGetFlags(stream.get(), &flags));
  CHECK(k.flags() == flags);
}

TEST_CASE("a created shared_stream answers every query from its cache while capturing") {
  for (const mode_case& mode : modes) {
    const shared_stream s = shared_stream::create({.non_blocking = true});
    const unsigned long long id = s.id();
    const unsigned int flags = s.flags();
    const int device = s.device();
    check_under_capture("shared_stream (created) queries", outcome::works, s.get(), mode, [&](cudaStream_t) {
      CHECK(s.id() == id);
      CHECK(s.flags() == flags);
      CHECK(s.device() == device);
      (void)s.priority();
      (void)s.record();
      CHECK(s.is_capturing());
    });
    check_under_capture("shared_stream::is_done", outcome::refuses, s.get(), mode,
                        [&](cudaStream_t) { (void)s.is_done(); });
  }
}

TEST_CASE("unique_stream on a capturing stream") {
  for (const mode_case& mode : modes) {
    const unique_stream u = unique_stream::create({.non_blocking = true});
    check_under_capture("unique_stream::is_done", outcome::refuses, u.get(), mode,
                        [&](cudaStream_t) { (void)u.is_done(); });
    check_under_capture("unique_stream::sync", outcome::refuses, u.get(), mode, [&](cudaStream_t) { u.sync(); });
    check_under_capture("unique_stream::record", outcome::works, u.get(), mode, [&](cudaStream_t) {
      streamlike::event e = u.record();
      u.wait(e.get());
      u.wait(u);
    });
    check_under_capture("unique_stream::is_capturing", outcome::works, u.get(), mode, [&](cudaStream_t) {
      CHECK(u.is_capturing());
      CHECK(u.capture_info().status == streamlike::capture_status::active);
    });
  }
}

TEST_CASE("the per-thread default stream, capturing: device answers for the current device, id refuses") {
  for (const mode_case& mode : modes) {
    check_under_capture("stream_view::device", outcome::works, cudaStreamPerThread, mode,
                        [](cudaStream_t s) { CHECK(stream_view{s}.device() == current_device()); });
    check_under_capture("stream_view::id", outcome::refuses, cudaStreamPerThread, mode,
                        [](cudaStream_t s) { (void)stream_view{s}.id(); });
  }
}

TEST_CASE("a stream that does not capture reports none") {
  gpu_test::owned_stream stream;
  const stream_view view{stream.get()};
  CHECK_FALSE(view.is_capturing());
  const streamlike::capture_state state = view.capture_info();
  CHECK(state.status == streamlike::capture_status::none);
  CHECK(state.id == 0);
  CHECK(state.graph == nullptr);
  // And the queries refused under capture work again.
  CHECK(view.id() == gpu_test::stream_id(stream.get()));
  CHECK(view.is_done());
}

TEST_CASE("stream_pool::get_non_capturing skips a pool stream that a capture is using") {
  streamlike::stream_pool pool(2, {.non_blocking = true});
  const shared_stream busy = pool.at(0);
  GPU_REQUIRE_CUDA(cudaStreamBeginCapture(busy.get(), cudaStreamCaptureModeRelaxed));
  for (int i = 0; i < 4; ++i) {
    const shared_stream s = pool.get_non_capturing();
    CHECK(s == pool.at(1));
    CHECK_FALSE(s.is_capturing());
  }
  // Every stream capturing: refused by name.
  GPU_REQUIRE_CUDA(cudaStreamBeginCapture(pool.at(1).get(), cudaStreamCaptureModeRelaxed));
  bool refused = false;
  try {
    (void)pool.get_non_capturing();
  } catch (const streamlike::error& e) {
    refused = std::string(e.what()).find("stream_pool::get_non_capturing") != std::string::npos;
  }
  CHECK(refused);
  for (int i = 0; i < 2; ++i) {
    cudaGraph_t graph = nullptr;
    GPU_REQUIRE_CUDA(cudaStreamEndCapture(pool.at(static_cast<std::size_t>(i)).get(), &graph));
    GPU_REQUIRE_CUDA(cudaGraphDestroy(graph));
  }
  CHECK_FALSE(pool.get_non_capturing().is_capturing());
}

TEST_CASE("an invalidated capture: every refusing function, retain_until_done and wait refuse by name") {
  // The capture is invalidated by a raw cudaStreamQuery (what streamlike never does); each call
  // below must then refuse by name before touching CUDA, and the capture still ends (with CUDA's
  // cudaErrorStreamCaptureInvalidated), leaving the stream usable.
  const streamlike::graph_exec exec = streamlike::graph::create().instantiate();
  const unique_stream other = unique_stream::create({.non_blocking = true});
  auto destroyed = std::make_shared<std::atomic<int>>(0);
  struct counted {
    std::shared_ptr<std::atomic<int>> n;
    counted(counted&&) noexcept = default;
    explicit counted(std::shared_ptr<std::atomic<int>> d) : n(std::move(d)) {}
    ~counted() {
      if (n) ++*n;
    }
  };
  const std::vector<std::pair<const char*, std::function<void(cudaStream_t)>>> calls = {
      {"stream_view::id", [](cudaStream_t s) { (void)stream_view{s}.id(); }},
      {"stream_view::flags", [](cudaStream_t s) { (void)stream_view{s}.flags(); }},
      {"stream_view::is_done", [](cudaStream_t s) { (void)stream_view{s}.is_done(); }},
      {"stream_view::sync", [](cudaStream_t s) { stream_view{s}.sync(); }},
      {"shared_stream::id", [](cudaStream_t s) { (void)shared_stream::keep_alive(s, 0).id(); }},
      {"shared_stream::flags", [](cudaStream_t s) { (void)shared_stream::keep_alive(s, 0).flags(); }},
      {"shared_stream::is_done", [](cudaStream_t s) { (void)shared_stream::keep_alive(s, 0).is_done(); }},
      {"shared_stream::sync", [](cudaStream_t s) { shared_stream::keep_alive(s, 0).sync(); }},
      {"shared_stream::adopt", [](cudaStream_t s) { (void)new shared_stream(shared_stream::adopt(s)); }},
      {"unique_stream::is_done",
       [](cudaStream_t s) {
         unique_stream u = unique_stream::adopt(s);
         const struct release_at_exit {
           unique_stream& u;
           ~release_at_exit() { (void)u.release(); }
         } keep{u};
         (void)u.is_done();
       }},
      {"unique_stream::sync",
       [](cudaStream_t s) {
         unique_stream u = unique_stream::adopt(s);
         const struct release_at_exit {
           unique_stream& u;
           ~release_at_exit() { (void)u.release(); }
         } keep{u};
         u.sync();
       }},
      {"capture_scope::begin", [](cudaStream_t s) { (void)streamlike::capture_scope::begin(s); }},
      {"graph_exec::launch", [&](cudaStream_t s) { exec.launch(s); }},
      {"graph_exec::upload", [&](cudaStream_t s) { exec.upload(s); }},
      {"retain_until_done", [&](cudaStream_t s) { streamlike::retain_until_done(s, counted(destroyed)); }},
      {"stream_view::wait", [&](cudaStream_t s) { streamlike::wait(s, other); }},
      {"shared_stream::wait", [&](cudaStream_t s) { shared_stream::keep_alive(s, 0).wait(other); }},
  };
  for (const mode_case& mode : modes) {
    for (const auto& [name, call] : calls) {
      INFO(name, " in an invalidated ", mode.name, " capture");
      gpu_test::owned_stream stream;
      const cudaStream_t s = stream.get();
      GPU_REQUIRE_CUDA(cudaStreamBeginCapture(s, mode.mode));
      (void)cudaStreamQuery(s); // invalidates the capture
      (void)cudaGetLastError();
      REQUIRE(stream_view{s}.capture_info().status == streamlike::capture_status::invalidated);
      const int destroyed_before = *destroyed;
      std::string message;
      cudaError_t code = cudaSuccess;
      try {
        call(s);
      } catch (const streamlike::error& e) {
        message = e.what();
        code = e.code();
      }
      CHECK_MESSAGE(message.find(name) != std::string::npos, "message: ", message);
      CHECK_MESSAGE(message.find("capturing") != std::string::npos, "message: ", message);
      CHECK(code == cudaErrorStreamCaptureUnsupported);
      if (std::string(name) == "retain_until_done") CHECK(*destroyed == destroyed_before + 1); // not leaked
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      GPU_REQUIRE_CUDA(cudaStreamGetCaptureInfo(s, &status));
      CHECK(status == cudaStreamCaptureStatusInvalidated); // still to be ended, by its owner
      cudaGraph_t graph = nullptr;
      CHECK(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated);
      CHECK(graph == nullptr);
      (void)cudaGetLastError();
      CHECK_FALSE(stream_view{s}.is_capturing());
      stream_view{s}.sync(); // the stream works again
    }
  }
}
