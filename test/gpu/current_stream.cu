// current_stream() and scoped_current_stream on real streams (streamlike/current_stream.hpp): the
// scope's stream is the one work lands on, its device is read from the stream, the default streams
// take the current device, and under CUDA graph capture (every mode) the scope and current_stream()
// leave the capture active. The check reports a real stream that is not the current one.
#include "capture_support.hpp"
#include "gpu_support.hpp"

#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_check.hpp>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/stream_view.hpp>

#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

namespace {

using streamlike::stream_view;

int current_device() {
  int device = -1;
  GPU_REQUIRE_CUDA(cudaGetDevice(&device));
  return device;
}

} // namespace

TEST_CASE("work launched on current_stream() inside a scope runs on the scope's stream") {
  gpu_test::owned_stream stream;
  const streamlike::scoped_current_stream scope{stream.get()};
  CHECK(scope.device() == current_device()); // read from the stream
  CHECK(streamlike::current_stream() == stream_view{stream.get()});
  gpu_test::check_runs_on(stream.get(), streamlike::current_stream());
}

TEST_CASE("outside any scope, with no framework loaded, the current stream is the handle 0") {
  CHECK(streamlike::current_stream() == stream_view{cudaStream_t{}});
  CHECK(streamlike::current_stream_providers().back().name == "streamlike");
}

TEST_CASE("a default stream is made current on the current device") {
  const streamlike::scoped_current_stream scope{stream_view::per_thread_default()};
  CHECK(scope.device() == current_device());
  CHECK(streamlike::current_stream() == stream_view::per_thread_default());
}

TEST_CASE("a scope on one thread is not seen on another") {
  gpu_test::owned_stream stream;
  const streamlike::scoped_current_stream scope{stream.get()};
  stream_view seen = stream_view::legacy_default();
  std::thread other([&] {
    (void)cudaSetDevice(scope.device());
    seen = streamlike::current_stream();
  });
  other.join();
  CHECK(seen == stream_view{cudaStream_t{}});
  CHECK(streamlike::current_stream() == stream_view{stream.get()});
}

TEST_CASE("the default device is the runtime's current device, with or without a current context") {
  int count = 0;
  GPU_REQUIRE_CUDA(cudaGetDeviceCount(&count));
  const int before = current_device();
  for (int device = 0; device < count; ++device) { // a current context: its device
    GPU_REQUIRE_CUDA(cudaSetDevice(device));
    gpu_test::owned_stream stream;
    const streamlike::scoped_current_stream scope{stream.get(), device};
    CHECK(streamlike::current_stream() == stream_view{stream.get()});
  }
  GPU_REQUIRE_CUDA(cudaSetDevice(before));
  // A thread that has made no CUDA call has no current context: the runtime's device (0) answers.
  gpu_test::owned_stream stream; // on `before`
  stream_view seen = stream_view::legacy_default();
  int runtime_device = -1;
  std::thread fresh([&] {
    const streamlike::scoped_current_stream scope{stream.get(), 0};
    seen = streamlike::current_stream();
    (void)cudaGetDevice(&runtime_device);
  });
  fresh.join();
  CHECK(runtime_device == 0);
  CHECK(seen == stream_view{stream.get()});
}

TEST_CASE("under capture, in every mode, a scope of the capturing stream and current_stream() keep the capture") {
  for (const gpu_test::mode_case& mode : gpu_test::modes) {
    INFO(mode.name, " capture");
    gpu_test::owned_stream stream;
    gpu_test::mapped_ints counter(1);
    GPU_REQUIRE_CUDA(cudaStreamBeginCapture(stream.get(), mode.mode));
    gpu_test::add_kernel<<<1, 1, 0, stream.get()>>>(counter.device(), 1);
    {
      const streamlike::scoped_current_stream scope{stream.get()}; // reads the device: capture-safe
      const stream_view current = streamlike::current_stream();
      CHECK(current == stream_view{stream.get()});
      gpu_test::add_kernel<<<1, 1, 0, current.get()>>>(counter.device(), 2);
      CHECK(streamlike::current_stream_conflicts().empty());
    }
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    GPU_REQUIRE_CUDA(cudaStreamGetCaptureInfo(stream.get(), &status));
    CHECK_MESSAGE(status == cudaStreamCaptureStatusActive, "the capture was invalidated");
    cudaGraph_t graph = nullptr;
    GPU_REQUIRE_CUDA(cudaStreamEndCapture(stream.get(), &graph));
    cudaGraphExec_t exec = nullptr;
    GPU_REQUIRE_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < 3; ++i) GPU_REQUIRE_CUDA(cudaGraphLaunch(exec, stream.get()));
    GPU_REQUIRE_CUDA(cudaStreamSynchronize(stream.get()));
    CHECK(counter.read(0) == 9);
    GPU_REQUIRE_CUDA(cudaGraphExecDestroy(exec));
    GPU_REQUIRE_CUDA(cudaGraphDestroy(graph));
  }
}

namespace {
std::vector<std::string> reported_sites;
void record(const streamlike::current_stream_mismatch& m) noexcept { reported_sites.emplace_back(m.site); }
} // namespace

TEST_CASE("the check reads a real stream's device and reports it once when it is not the current one") {
  gpu_test::owned_stream current;
  gpu_test::owned_stream other;
  reported_sites.clear();
  (void)streamlike::set_current_stream_check_reporter(&record);
  streamlike::set_current_stream_check(true);
  {
    const streamlike::scoped_current_stream scope{current.get()};
    streamlike::check_current_stream(current.get(), "current_stream.cu:agree");
    streamlike::check_current_stream(other.get(), "current_stream.cu:other");
    streamlike::check_current_stream(other.get(), "current_stream.cu:other");
  }
  streamlike::set_current_stream_check(false);
  (void)streamlike::set_current_stream_check_reporter(nullptr);
  CHECK(reported_sites == std::vector<std::string>{"current_stream.cu:other"});
}
