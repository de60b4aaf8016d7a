// capture_scope, streamlike::capture, graph and graph_exec on a device (include/streamlike/
// capture.hpp, graph.hpp): a scope captures in each mode and yields a graph that instantiates and
// launches on any stream_like object (a raw handle, a view, both owners); an exception inside the
// scope ends the capture and discards the graph, leaving the stream usable, also with a stream
// forked into the capture and never joined; end() of an invalidated capture throws and ends it.
#include "capture_support.hpp"
#include "gpu_support.hpp"

#include <streamlike/capture.hpp>
#include <streamlike/graph.hpp>
#include <streamlike/ordering.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace {

using streamlike::capture_mode;
using streamlike::capture_scope;
using streamlike::graph;
using streamlike::graph_exec;
using streamlike::stream_view;

using gpu_test::add_kernel;
const capture_mode modes[] = {capture_mode::global, capture_mode::thread_local_, capture_mode::relaxed};

// The stream runs work again: a kernel queued on it completes.
void check_usable(cudaStream_t s) {
  gpu_test::mapped_ints out(1);
  add_kernel<<<1, 1, 0, s>>>(out.device(), 42);
  GPU_REQUIRE_CUDA(cudaStreamSynchronize(s));
  CHECK(out.read(0) == 42);
  CHECK(cudaGetLastError() == cudaSuccess);
}

} // namespace

TEST_CASE("a capture scope yields a graph that replays on any stream_like object") {
  for (const capture_mode mode : modes) {
    INFO(static_cast<int>(mode));
    streamlike::unique_stream owner = streamlike::unique_stream::create();
    gpu_test::mapped_ints out(1);
    graph g;
    {
      capture_scope scope = capture_scope::begin(owner, mode);
      CHECK(scope.active());
      CHECK(scope.stream() == owner);
      CHECK(owner.is_capturing());
      CHECK(owner.capture_info().graph != nullptr);
      add_kernel<<<1, 1, 0, owner.get()>>>(out.device(), 1);
      add_kernel<<<1, 1, 0, owner.get()>>>(out.device(), 2);
      g = scope.end();
      CHECK_FALSE(scope.active());
    }
    CHECK_FALSE(owner.is_capturing());
    REQUIRE(static_cast<bool>(g));
    CHECK(g.node_count() == 2);
    CHECK(out.read(0) == 0); // recorded, not run
    const graph_exec exec = g.instantiate();
    const streamlike::shared_stream shared = streamlike::shared_stream::create();
    gpu_test::owned_stream raw;
    for (int i = 0; i < 25; ++i) {
      exec.launch(owner);
      exec.launch(owner.view());
    }
    owner.sync();
    for (int i = 0; i < 25; ++i) exec.launch(shared);
    shared.sync();
    for (int i = 0; i < 25; ++i) exec.launch(raw.get());
    GPU_REQUIRE_CUDA(cudaStreamSynchronize(raw.get()));
    CHECK(out.read(0) == 3 * 100);
  }
}

TEST_CASE("a graph_exec outlives its graph, uploads, and moves") {
  gpu_test::owned_stream s;
  gpu_test::mapped_ints out(1);
  graph_exec exec;
  {
    graph g = streamlike::capture(s.get(), [&](stream_view v) { add_kernel<<<1, 1, 0, v.get()>>>(out.device(), 1); });
    exec = g.instantiate();
  } // the graph is destroyed here
  exec.upload(s.get());
  graph_exec moved = std::move(exec);
  CHECK_FALSE(static_cast<bool>(exec)); // NOLINT(bugprone-use-after-move): moved-from is empty
  for (int i = 0; i < 100; ++i) moved.launch(s.get());
  GPU_REQUIRE_CUDA(cudaStreamSynchronize(s.get()));
  CHECK(out.read(0) == 100);
}

TEST_CASE("an exception inside the scope ends the capture and discards the graph; the stream is usable") {
  for (const capture_mode mode : modes) {
    INFO(static_cast<int>(mode));
    gpu_test::owned_stream s;
    gpu_test::mapped_ints out(1);
    bool caught = false;
    try {
      capture_scope scope = capture_scope::begin(s.get(), mode);
      add_kernel<<<1, 1, 0, s.get()>>>(out.device(), 1);
      throw std::runtime_error("a library call failed");
    } catch (const std::runtime_error&) {
      caught = true;
    }
    CHECK(caught);
    CHECK_FALSE(stream_view{s.get()}.is_capturing());
    check_usable(s.get());
    CHECK(out.read(0) == 0); // the captured kernel never ran
  }
}

TEST_CASE("streamlike::capture: a throwing body ends the capture, also with a forked stream never joined") {
  gpu_test::owned_stream main;
  gpu_test::owned_stream side;
  bool caught = false;
  try {
    (void)streamlike::capture(main.get(), [&](stream_view v) {
      streamlike::wait(side.get(), v); // fork side into the capture
      CHECK(stream_view{side.get()}.is_capturing());
      throw std::runtime_error("failed before the join");
    });
  } catch (const std::runtime_error&) {
    caught = true;
  }
  CHECK(caught);
  CHECK_FALSE(stream_view{main.get()}.is_capturing());
  CHECK_FALSE(stream_view{side.get()}.is_capturing());
  check_usable(main.get());
  check_usable(side.get());
}

TEST_CASE("end() of an invalidated capture throws and ends it; end() twice throws") {
  gpu_test::owned_stream s;
  capture_scope scope = capture_scope::begin(s.get(), capture_mode::relaxed);
  (void)cudaStreamQuery(s.get()); // invalidates the capture (what streamlike itself never does)
  (void)cudaGetLastError();
  CHECK(stream_view{s.get()}.capture_info().status == streamlike::capture_status::invalidated);
  bool threw = false;
  try {
    (void)scope.end();
  } catch (const streamlike::error& e) {
    threw = std::string(e.what()).find("capture_scope::end") != std::string::npos;
  }
  CHECK(threw);
  CHECK_FALSE(stream_view{s.get()}.is_capturing());
  bool second = false;
  try {
    (void)scope.end();
  } catch (const streamlike::error& e) {
    second = std::string(e.what()).find("already ended") != std::string::npos;
  }
  CHECK(second);
  check_usable(s.get());
}

TEST_CASE("capture_scope::begin on a stream that is already capturing is refused by CUDA, by name") {
  gpu_test::owned_stream s;
  capture_scope outer = capture_scope::begin(s.get());
  bool refused = false;
  try {
    (void)capture_scope::begin(s.get());
  } catch (const streamlike::error& e) {
    refused = std::string(e.what()).find("capture_scope::begin") != std::string::npos;
  }
  CHECK(refused);
  (void)cudaGetLastError();
  graph g = outer.end();
  CHECK(g.node_count() == 0);
}

TEST_CASE("a graph_exec launched on a capturing stream is refused by name, the capture intact") {
  gpu_test::owned_stream s;
  gpu_test::mapped_ints out(1);
  const graph inner =
      streamlike::capture(s.get(), [&](stream_view v) { add_kernel<<<1, 1, 0, v.get()>>>(out.device(), 1); });
  const graph_exec inner_exec = inner.instantiate();
  for (const capture_mode mode : modes) {
    INFO(static_cast<int>(mode));
    capture_scope scope = capture_scope::begin(s.get(), mode);
    add_kernel<<<1, 1, 0, s.get()>>>(out.device(), 10);
    std::string launch_message;
    std::string upload_message;
    try {
      inner_exec.launch(s.get());
    } catch (const streamlike::error& e) {
      launch_message = e.what();
    }
    try {
      inner_exec.upload(s.get());
    } catch (const streamlike::error& e) {
      upload_message = e.what();
    }
    CHECK_MESSAGE(launch_message.find("graph_exec::launch") != std::string::npos, launch_message);
    CHECK_MESSAGE(launch_message.find("capturing") != std::string::npos, launch_message);
    CHECK_MESSAGE(upload_message.find("graph_exec::upload") != std::string::npos, upload_message);
    CHECK(scope.stream().capture_info().status == streamlike::capture_status::active);
    const graph outer = scope.end();
    const graph_exec outer_exec = outer.instantiate();
    outer_exec.launch(s.get());
  }
  inner_exec.launch(s.get()); // and eagerly it launches
  GPU_REQUIRE_CUDA(cudaStreamSynchronize(s.get()));
  CHECK(out.read(0) == 31);
}

TEST_CASE("a moved-from capture_scope, destroyed, leaves the capture to its new owner") {
  for (const capture_mode mode : modes) {
    INFO(static_cast<int>(mode));
    gpu_test::owned_stream s;
    gpu_test::mapped_ints out(1);
    std::optional<capture_scope> first{capture_scope::begin(s.get(), mode)};
    add_kernel<<<1, 1, 0, s.get()>>>(out.device(), 1);
    capture_scope second = std::move(*first);
    CHECK_FALSE(first->active());
    CHECK(second.active());
    CHECK(second.stream() == stream_view{s.get()});
    first.reset(); // the moved-from scope's destructor must not end the capture
    CHECK(stream_view{s.get()}.capture_info().status == streamlike::capture_status::active);
    add_kernel<<<1, 1, 0, s.get()>>>(out.device(), 2);
    const graph g = second.end();
    CHECK_FALSE(stream_view{s.get()}.is_capturing());
    const graph_exec exec = g.instantiate();
    exec.launch(s.get());
    GPU_REQUIRE_CUDA(cudaStreamSynchronize(s.get()));
    CHECK(out.read(0) == 3); // both kernels, the one before the move and the one after
  }
}

TEST_CASE("a moved-from capture_scope refuses end() by name; the new owner ends the capture") {
  gpu_test::owned_stream s;
  capture_scope first = capture_scope::begin(s.get());
  capture_scope second = std::move(first);
  std::string message;
  try {
    (void)first.end();
  } catch (const streamlike::error& e) {
    message = e.what();
  }
  CHECK_MESSAGE(message.find("capture_scope::end") != std::string::npos, message);
  CHECK_MESSAGE(message.find("moved from") != std::string::npos, message);
  CHECK(stream_view{s.get()}.is_capturing()); // the refusal did not touch the capture
  const graph g = second.end();
  CHECK(g.node_count() == 0);
  check_usable(s.get());
}
