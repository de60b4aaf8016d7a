// Ordering under CUDA graph capture (docs/cuda-graphs.md): streamlike::wait(side, capturing)
// forks `side` into the capture and wait(capturing, side) joins it back, the standard multi-stream
// capture pattern, through the cached events; the graph replays both branches. A capturing stream
// waiting on work outside its capture is refused by name, leaving the capture intact. In every
// capture mode.
#include "capture_support.hpp"
#include "gpu_support.hpp"

#include <streamlike/event.hpp>
#include <streamlike/ordering.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <doctest/doctest.h>

#include <string>

namespace {

using streamlike::stream_view;

using gpu_test::add_kernel;
using gpu_test::mode_case;
using gpu_test::modes;

unsigned long long capture_id(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  GPU_REQUIRE_CUDA(cudaStreamGetCaptureInfo(s, &status, &id));
  return status == cudaStreamCaptureStatusActive ? id : 0;
}

// Ends the capture of `s`.
cudaGraph_t end_capture(cudaStream_t s) {
  cudaGraph_t graph = nullptr;
  GPU_REQUIRE_CUDA(cudaStreamEndCapture(s, &graph));
  return graph;
}

// Replays `graph` `replays` times on `s`, synchronizes and destroys it. Instantiating is itself
// refused while this thread captures in global or thread-local mode: call it after every capture
// of the thread has ended.
void replay(cudaStream_t s, cudaGraph_t graph, int replays);

// Ends the capture of `s` and replays its graph.
void replay(cudaStream_t s, int replays) { replay(s, end_capture(s), replays); }

void replay(cudaStream_t s, cudaGraph_t graph, int replays) {
  cudaGraphExec_t exec = nullptr;
  GPU_REQUIRE_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < replays; ++i) GPU_REQUIRE_CUDA(cudaGraphLaunch(exec, s));
  GPU_REQUIRE_CUDA(cudaStreamSynchronize(s));
  GPU_REQUIRE_CUDA(cudaGraphExecDestroy(exec));
  GPU_REQUIRE_CUDA(cudaGraphDestroy(graph));
}

} // namespace

TEST_CASE("fork and join through streamlike::wait, in every capture mode") {
  for (const mode_case& mode : modes) {
    INFO(mode.name);
    gpu_test::owned_stream main;
    gpu_test::owned_stream side;
    gpu_test::mapped_ints out(2);
    GPU_REQUIRE_CUDA(cudaStreamBeginCapture(main.get(), mode.mode));
    add_kernel<<<1, 1, 0, main.get()>>>(out.device(), 1);
    streamlike::wait(side.get(), main.get()); // fork: side joins the capture
    CHECK(capture_id(side.get()) == capture_id(main.get()));
    CHECK(capture_id(side.get()) != 0);
    add_kernel<<<1, 1, 0, side.get()>>>(out.device() + 1, 10);
    streamlike::wait(main.get(), side.get()); // join: main waits for the side branch
    CHECK(capture_id(main.get()) != 0);
    replay(main.get(), 100);
    CHECK(out.read(0) == 100);
    CHECK(out.read(1) == 1000);
    CHECK_FALSE(stream_view{side.get()}.is_capturing());
  }
}

TEST_CASE("fork and join through the members, shared_stream and a recorded event") {
  for (const mode_case& mode : modes) {
    INFO(mode.name);
    const streamlike::shared_stream main = streamlike::shared_stream::create({.non_blocking = true});
    const streamlike::shared_stream side = streamlike::shared_stream::create({.non_blocking = true});
    gpu_test::mapped_ints out(2);
    GPU_REQUIRE_CUDA(cudaStreamBeginCapture(main.get(), mode.mode));
    add_kernel<<<1, 1, 0, main.get()>>>(out.device(), 1);
    side.wait(main);
    add_kernel<<<1, 1, 0, side.get()>>>(out.device() + 1, 10);
    streamlike::event done = side.record(); // an event of the capture
    main.wait(done.get());
    replay(main.get(), 100);
    CHECK(out.read(0) == 100);
    CHECK(out.read(1) == 1000);
  }
}

TEST_CASE("a capturing stream waiting on work outside its capture is refused by name, the capture intact") {
  for (const mode_case& mode : modes) {
    INFO(mode.name);
    gpu_test::owned_stream capturing;
    gpu_test::owned_stream outside;
    gpu_test::mapped_ints out(2);
    add_kernel<<<1, 1, 0, outside.get()>>>(out.device() + 1, 7); // eager work on the other stream
    GPU_REQUIRE_CUDA(cudaStreamBeginCapture(capturing.get(), mode.mode));
    add_kernel<<<1, 1, 0, capturing.get()>>>(out.device(), 1);
    std::string message;
    try {
      streamlike::wait(capturing.get(), outside.get());
    } catch (const streamlike::error& e) {
      message = e.what();
      CHECK(e.code() == cudaErrorStreamCaptureIsolation);
    }
    CHECK_MESSAGE(message.find("stream_view::wait") != std::string::npos, message);
    CHECK_MESSAGE(message.find("outside that capture") != std::string::npos, message);
    CHECK(capture_id(capturing.get()) != 0); // still active
    CHECK_FALSE(stream_view{outside.get()}.is_capturing());
    replay(capturing.get(), 5);
    CHECK(out.read(0) == 5);
    GPU_REQUIRE_CUDA(cudaStreamSynchronize(outside.get()));
    CHECK(out.read(1) == 7);
  }
}

TEST_CASE("a capturing stream waiting on a stream of another capture is refused, both captures intact") {
  gpu_test::owned_stream a;
  gpu_test::owned_stream b;
  gpu_test::mapped_ints out(2);
  GPU_REQUIRE_CUDA(cudaStreamBeginCapture(a.get(), cudaStreamCaptureModeThreadLocal));
  GPU_REQUIRE_CUDA(cudaStreamBeginCapture(b.get(), cudaStreamCaptureModeThreadLocal));
  add_kernel<<<1, 1, 0, a.get()>>>(out.device(), 1);
  add_kernel<<<1, 1, 0, b.get()>>>(out.device() + 1, 1);
  bool refused = false;
  try {
    stream_view{a.get()}.wait(stream_view{b.get()});
  } catch (const streamlike::error& e) {
    refused = std::string(e.what()).find("stream_view::wait") != std::string::npos;
  }
  CHECK(refused);
  CHECK(capture_id(a.get()) != 0);
  CHECK(capture_id(b.get()) != 0);
  cudaGraph_t graph_b = end_capture(b.get());
  cudaGraph_t graph_a = end_capture(a.get());
  replay(b.get(), graph_b, 2);
  replay(a.get(), graph_a, 3);
  CHECK(out.read(0) == 3);
  CHECK(out.read(1) == 2);
}

TEST_CASE("eager wait is unchanged: a stream outside any capture waits on another") {
  gpu_test::owned_stream producer;
  gpu_test::owned_stream consumer;
  gpu_test::mapped_ints out(1);
  add_kernel<<<1, 1, 0, producer.get()>>>(out.device(), 5);
  streamlike::wait(consumer.get(), producer.get());
  add_kernel<<<1, 1, 0, consumer.get()>>>(out.device(), 1);
  GPU_REQUIRE_CUDA(cudaStreamSynchronize(consumer.get()));
  CHECK(out.read(0) == 6);
}
