// streamlike/event.hpp under CUDA graph capture (docs/cuda-graphs.md, "Events"), in each of CUDA's
// three capture modes:
//   * an event recorded in a capture (event::record, streamlike::record, an owner's record())
//     remembers the capture; its sync(), is_done() and elapsed_ms() refuse by name (code
//     cudaErrorCapturedEvent) with the capture still active, and the graph replays the work
//     captured around them; after the capture CUDA itself refuses them with that code;
//   * wait(stream, event): a capturing stream refuses an event recorded outside its capture (code
//     cudaErrorStreamCaptureIsolation), the capture intact; fork and join on events of the capture
//     work; wait_external(stream, event) makes an event-wait node;
//   * sync() and is_done() of an event recorded outside any capture refuse while a capture_scope in
//     global or thread-local mode runs on this thread (global: on any thread), and work in relaxed
//     mode, on a thread in relaxed interaction mode, and on another thread during a thread-local one.
#include "capture_support.hpp"
#include "gpu_support.hpp"

#include <streamlike/capture.hpp>
#include <streamlike/error.hpp>
#include <streamlike/event.hpp>
#include <streamlike/graph.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

using streamlike::event;
using streamlike::stream_view;

using gpu_test::add_kernel;
using gpu_test::mode_case;
using gpu_test::modes;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

cudaStreamCaptureStatus status_of(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  GPU_REQUIRE_CUDA(cudaStreamIsCapturing(s, &status));
  return status;
}

unsigned long long capture_id(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  GPU_REQUIRE_CUDA(cudaStreamGetCaptureInfo(s, &status, &id));
  return status == cudaStreamCaptureStatusActive ? id : 0;
}

// What a refused call threw: its code and message; cudaSuccess and "" when it did not throw.
struct refusal {
  cudaError_t code = cudaSuccess;
  std::string message;
};

refusal refusal_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const streamlike::error& e) {
    return {e.code(), e.what()};
  }
  return {};
}

// Checks that `call` was refused by name with `code`, the message naming `name` and holding `part`.
void check_refused(const std::function<void()>& call, cudaError_t code, const char* name, const char* part) {
  const refusal r = refusal_of(call);
  INFO(name, ": ", r.message);
  CHECK_MESSAGE(r.code == code, "expected ", cudaGetErrorName(code), ", got ", cudaGetErrorName(r.code));
  CHECK(contains(r.message, name));
  CHECK(contains(r.message, part));
}

cudaGraph_t end_capture(cudaStream_t s) {
  cudaGraph_t graph = nullptr;
  GPU_REQUIRE_CUDA(cudaStreamEndCapture(s, &graph));
  return graph;
}

// Instantiates `graph`, launches it `replays` times on `s`, synchronizes and destroys both.
void replay(cudaStream_t s, cudaGraph_t graph, int replays) {
  cudaGraphExec_t exec = nullptr;
  GPU_REQUIRE_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < replays; ++i) GPU_REQUIRE_CUDA(cudaGraphLaunch(exec, s));
  GPU_REQUIRE_CUDA(cudaStreamSynchronize(s));
  GPU_REQUIRE_CUDA(cudaGraphExecDestroy(exec));
  GPU_REQUIRE_CUDA(cudaGraphDestroy(graph));
}

std::size_t nodes_of_type(cudaGraph_t graph, cudaGraphNodeType type) {
  std::size_t count = 0;
  GPU_REQUIRE_CUDA(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  GPU_REQUIRE_CUDA(cudaGraphGetNodes(graph, nodes.data(), &count));
  std::size_t matching = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType t{};
    GPU_REQUIRE_CUDA(cudaGraphNodeGetType(node, &t));
    if (t == type) ++matching;
  }
  return matching;
}

constexpr const char* in_capture = "last recorded in a CUDA graph capture";

} // namespace

TEST_CASE("an event recorded in a capture refuses sync, is_done and elapsed_ms by name; the graph replays") {
  for (const mode_case& mode : modes) {
    INFO(mode.name, " capture");
    const streamlike::shared_stream s = streamlike::shared_stream::create({.non_blocking = true});
    gpu_test::mapped_ints counter(1);
    event member = event::create({.timing = true});
    GPU_REQUIRE_CUDA(cudaStreamBeginCapture(s.get(), mode.mode));
    const unsigned long long id = capture_id(s.get());
    REQUIRE(id != 0);
    add_kernel<<<1, 1, 0, s.get()>>>(counter.device(), 1);
    member.record(s.view());                                        // event::record
    event recorded = streamlike::record(s.get(), {.timing = true}); // streamlike::record
    event owners = s.record();                                      // an owner's record()
    CHECK(member.capture_id() == id);
    CHECK(recorded.capture_id() == id);
    CHECK(owners.capture_id() == id);

    check_refused([&] { member.sync(); }, cudaErrorCapturedEvent, "event::sync", in_capture);
    CHECK(status_of(s.get()) == cudaStreamCaptureStatusActive);
    check_refused([&] { (void)recorded.is_done(); }, cudaErrorCapturedEvent, "event::is_done", in_capture);
    CHECK(status_of(s.get()) == cudaStreamCaptureStatusActive);
    check_refused([&] { (void)owners.is_done(); }, cudaErrorCapturedEvent, "event::is_done", in_capture);
    check_refused([&] { (void)streamlike::elapsed_ms(member, recorded); }, cudaErrorCapturedEvent,
                  "event::elapsed_ms (start)", in_capture);
    CHECK(status_of(s.get()) == cudaStreamCaptureStatusActive);

    add_kernel<<<1, 1, 0, s.get()>>>(counter.device(), 2);
    replay(s.get(), end_capture(s.get()), 3);
    CHECK(counter.read(0) == 9);

    // After the capture: CUDA itself refuses these calls on an event last recorded in a capture
    // (docs/cuda-graphs.md says so; this checks it). CUDA 13 answers cudaErrorInvalidValue, where
    // driver_types.h describes cudaErrorCapturedEvent; either is a refusal, success is not.
    const auto refused_by_cuda = [](cudaError_t e) {
      return e == cudaErrorInvalidValue || e == cudaErrorCapturedEvent;
    };
    const cudaError_t queried = cudaEventQuery(recorded.get());
    CHECK_MESSAGE(refused_by_cuda(queried), "cudaEventQuery after the capture: ", cudaGetErrorName(queried));
    const cudaError_t synced = cudaEventSynchronize(recorded.get());
    CHECK_MESSAGE(refused_by_cuda(synced), "cudaEventSynchronize after the capture: ", cudaGetErrorName(synced));
    (void)cudaGetLastError();
    check_refused([&] { member.sync(); }, cudaErrorCapturedEvent, "event::sync", in_capture);

    // Recorded again outside a capture, the event is an ordinary one.
    member.record(s.view());
    recorded.record(s.view());
    CHECK(member.capture_id() == 0);
    member.sync();
    recorded.sync();
    CHECK(member.is_done());
    CHECK(streamlike::elapsed_ms(member, recorded) >= 0.0f);
  }
}

TEST_CASE("a capturing stream waiting on an event recorded outside its capture is refused, the capture intact") {
  for (const mode_case& mode : modes) {
    INFO(mode.name, " capture");
    gpu_test::owned_stream capturing;
    gpu_test::owned_stream outside;
    gpu_test::mapped_ints out(2);
    add_kernel<<<1, 1, 0, outside.get()>>>(out.device() + 1, 7);
    const event before = streamlike::record(outside.get()); // outside any capture
    const event never = event::create();                    // never recorded
    GPU_REQUIRE_CUDA(cudaStreamBeginCapture(capturing.get(), mode.mode));
    add_kernel<<<1, 1, 0, capturing.get()>>>(out.device(), 1);
    check_refused([&] { streamlike::wait(capturing.get(), before); }, cudaErrorStreamCaptureIsolation,
                  "wait(stream, event)", "outside that capture");
    CHECK(status_of(capturing.get()) == cudaStreamCaptureStatusActive);
    check_refused([&] { streamlike::wait(stream_view{capturing.get()}, never); }, cudaErrorStreamCaptureIsolation,
                  "wait(stream, event)", "outside any capture, or never");
    CHECK(status_of(capturing.get()) == cudaStreamCaptureStatusActive);
    add_kernel<<<1, 1, 0, capturing.get()>>>(out.device(), 2);
    replay(capturing.get(), end_capture(capturing.get()), 3);
    CHECK(out.read(0) == 9);
    GPU_REQUIRE_CUDA(cudaStreamSynchronize(outside.get()));
    CHECK(out.read(1) == 7);
    // The same wait outside the capture is an ordinary one.
    streamlike::wait(capturing.get(), before);
    GPU_REQUIRE_CUDA(cudaStreamSynchronize(capturing.get()));
  }
}

TEST_CASE("fork and join through events of the capture, with wait(stream, event)") {
  for (const mode_case& mode : modes) {
    INFO(mode.name, " capture");
    const streamlike::shared_stream main = streamlike::shared_stream::create({.non_blocking = true});
    const streamlike::shared_stream side = streamlike::shared_stream::create({.non_blocking = true});
    gpu_test::mapped_ints out(2);
    GPU_REQUIRE_CUDA(cudaStreamBeginCapture(main.get(), mode.mode));
    add_kernel<<<1, 1, 0, main.get()>>>(out.device(), 1);
    const event forked = main.record();
    streamlike::wait(side, forked); // a stream outside the capture joins it (a fork)
    CHECK(capture_id(side.get()) == capture_id(main.get()));
    add_kernel<<<1, 1, 0, side.get()>>>(out.device() + 1, 10);
    const event joined = streamlike::record(side);
    streamlike::wait(main, joined); // the join, on an event of the same capture
    CHECK(status_of(main.get()) == cudaStreamCaptureStatusActive);
    add_kernel<<<1, 1, 0, main.get()>>>(out.device(), 2);
    replay(main.get(), end_capture(main.get()), 3);
    CHECK(out.read(0) == 9);
    CHECK(out.read(1) == 30);
    CHECK(status_of(side.get()) == cudaStreamCaptureStatusNone);
  }
}

TEST_CASE("waiting on an event of another capture is refused, both captures intact") {
  gpu_test::owned_stream a;
  gpu_test::owned_stream b;
  gpu_test::mapped_ints out(2);
  GPU_REQUIRE_CUDA(cudaStreamBeginCapture(a.get(), cudaStreamCaptureModeThreadLocal));
  GPU_REQUIRE_CUDA(cudaStreamBeginCapture(b.get(), cudaStreamCaptureModeThreadLocal));
  add_kernel<<<1, 1, 0, a.get()>>>(out.device(), 1);
  add_kernel<<<1, 1, 0, b.get()>>>(out.device() + 1, 1);
  const event of_b = streamlike::record(b.get());
  CHECK(of_b.capture_id() == capture_id(b.get()));
  check_refused([&] { streamlike::wait(a.get(), of_b); }, cudaErrorStreamCaptureIsolation, "wait(stream, event)",
                "in capture ");
  CHECK(status_of(a.get()) == cudaStreamCaptureStatusActive);
  CHECK(status_of(b.get()) == cudaStreamCaptureStatusActive);
  cudaGraph_t graph_b = end_capture(b.get());
  cudaGraph_t graph_a = end_capture(a.get());
  replay(b.get(), graph_b, 2);
  replay(a.get(), graph_a, 3);
  CHECK(out.read(0) == 3);
  CHECK(out.read(1) == 2);
}

TEST_CASE("wait_external(stream, event): an event-wait node in a capture, an ordinary wait outside") {
  gpu_test::owned_stream producer;
  gpu_test::owned_stream consumer;
  gpu_test::mapped_ints out(1);
  add_kernel<<<1, 1, 0, producer.get()>>>(out.device(), 5);
  const event produced = streamlike::record(producer.get());
  streamlike::wait_external(consumer.get(), produced); // outside a capture: the ordinary wait
  add_kernel<<<1, 1, 0, consumer.get()>>>(out.device(), 1);
  GPU_REQUIRE_CUDA(cudaStreamSynchronize(consumer.get()));
  CHECK(out.read(0) == 6);

  for (const mode_case& mode : modes) {
    INFO(mode.name, " capture");
    gpu_test::mapped_ints counter(1);
    GPU_REQUIRE_CUDA(cudaStreamBeginCapture(consumer.get(), mode.mode));
    add_kernel<<<1, 1, 0, consumer.get()>>>(counter.device(), 1);
    streamlike::wait_external(consumer.get(), produced); // the caller's explicit choice: not refused
    CHECK(status_of(consumer.get()) == cudaStreamCaptureStatusActive);
    add_kernel<<<1, 1, 0, consumer.get()>>>(counter.device(), 2);
    cudaGraph_t graph = end_capture(consumer.get());
    CHECK(nodes_of_type(graph, cudaGraphNodeTypeWaitEvent) == 1);
    replay(consumer.get(), graph, 3);
    CHECK(counter.read(0) == 9);
  }
}

TEST_CASE("sync and is_done of an event recorded outside any capture, during a capture_scope on this thread") {
  const streamlike::shared_stream other = streamlike::shared_stream::create({.non_blocking = true});
  const event done = other.record();
  done.sync();
  for (const mode_case& mode : modes) {
    INFO(mode.name, " capture");
    const streamlike::shared_stream s = streamlike::shared_stream::create({.non_blocking = true});
    gpu_test::mapped_ints counter(1);
    streamlike::graph g;
    {
      auto scope = streamlike::capture_scope::begin(s, static_cast<streamlike::capture_mode>(mode.mode));
      add_kernel<<<1, 1, 0, s.get()>>>(counter.device(), 1);
      if (mode.mode == cudaStreamCaptureModeRelaxed) {
        done.sync(); // a relaxed capture prohibits nothing
        CHECK(done.is_done());
      } else {
        check_refused([&] { done.sync(); }, cudaErrorStreamCaptureUnsupported, "event::sync", "this thread began");
        CHECK(status_of(s.get()) == cudaStreamCaptureStatusActive);
        check_refused([&] { (void)done.is_done(); }, cudaErrorStreamCaptureUnsupported, "event::is_done",
                      "cudaEventQuery");
        // A thread in relaxed interaction mode may make the call (as torch's allocator does).
        cudaStreamCaptureMode interaction = cudaStreamCaptureModeRelaxed;
        GPU_REQUIRE_CUDA(cudaThreadExchangeStreamCaptureMode(&interaction));
        done.sync();
        CHECK(done.is_done());
        GPU_REQUIRE_CUDA(cudaThreadExchangeStreamCaptureMode(&interaction));
      }
      CHECK(status_of(s.get()) == cudaStreamCaptureStatusActive);
      add_kernel<<<1, 1, 0, s.get()>>>(counter.device(), 2);
      g = scope.end();
    }
    done.sync(); // the capture is over: nothing prohibits the call
    CHECK(done.is_done());
    const streamlike::graph_exec exec = g.instantiate();
    for (int i = 0; i < 3; ++i) exec.launch(s);
    s.sync();
    CHECK(counter.read(0) == 9);
  }
}

TEST_CASE(
    "sync of an event on another thread: refused during a global capture_scope, works during a thread-local one") {
  const streamlike::shared_stream other = streamlike::shared_stream::create({.non_blocking = true});
  const event done = other.record();
  done.sync();
  for (const mode_case& mode : modes) {
    INFO(mode.name, " capture");
    const streamlike::shared_stream s = streamlike::shared_stream::create({.non_blocking = true});
    gpu_test::mapped_ints counter(1);
    streamlike::graph g;
    {
      auto scope = streamlike::capture_scope::begin(s, static_cast<streamlike::capture_mode>(mode.mode));
      add_kernel<<<1, 1, 0, s.get()>>>(counter.device(), 1);
      refusal on_other_thread;
      std::thread([&] { on_other_thread = refusal_of([&] { done.sync(); }); }).join();
      INFO(on_other_thread.message);
      if (mode.mode == cudaStreamCaptureModeGlobal) {
        CHECK(on_other_thread.code == cudaErrorStreamCaptureUnsupported);
        CHECK(contains(on_other_thread.message, "another thread began a CUDA graph capture in global mode"));
      } else {
        CHECK(on_other_thread.code == cudaSuccess); // CUDA ignores other threads' non-global captures
      }
      CHECK(status_of(s.get()) == cudaStreamCaptureStatusActive);
      add_kernel<<<1, 1, 0, s.get()>>>(counter.device(), 2);
      g = scope.end();
    }
    const streamlike::graph_exec exec = g.instantiate();
    for (int i = 0; i < 3; ++i) exec.launch(s);
    s.sync();
    CHECK(counter.read(0) == 9);
  }
}
