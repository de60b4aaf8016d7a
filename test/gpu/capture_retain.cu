// retain_until_done on a device (include/streamlike/retain_until_done.hpp): on a stream that runs
// work, the object is destroyed only after the work queued before it (a gated kernel) has
// finished, on streamlike's release thread (not CUDA's callback thread), where its destructor may
// make CUDA calls; on a capturing stream it outlives the capture, the graph, every executable
// graph and 100 replays, and is destroyed after the last graph_exec is gone; a capture discarded
// by an exception releases it too.
#include "capture_support.hpp"
#include "gpu_support.hpp"

#include <streamlike/capture.hpp>
#include <streamlike/graph.hpp>
#include <streamlike/retain_until_done.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <utility>

namespace {

using namespace std::chrono_literals;
using streamlike::stream_view;

using gpu_test::add_kernel;
// What a retained object reports when it dies: that it did, on which thread, and whether a CUDA
// call made by its destructor succeeded.
struct death_report {
  std::atomic<bool> destroyed{false};
  std::atomic<bool> cuda_call_ok{false};
  std::thread::id thread;
};

class tracked {
public:
  explicit tracked(std::shared_ptr<death_report> report) : report_(std::move(report)) {}
  tracked(tracked&& other) noexcept = default;
  tracked(const tracked&) = delete;
  tracked& operator=(const tracked&) = delete;
  tracked& operator=(tracked&&) = delete;
  ~tracked() {
    if (!report_) return; // moved from
    report_->thread = std::this_thread::get_id();
    int* scratch = nullptr; // a CUDA call, which CUDA's callback thread may not make
    report_->cuda_call_ok = cudaMalloc(&scratch, 16) == cudaSuccess && cudaFree(scratch) == cudaSuccess;
    report_->destroyed = true;
  }

private:
  std::shared_ptr<death_report> report_;
};

// Polls for up to 10 s: a user object's release arrives when CUDA sends it.
bool destroyed_soon(const death_report& report) {
  for (int i = 0; i < 2000 && !report.destroyed; ++i) {
    streamlike::detail::flush_released_objects();
    std::this_thread::sleep_for(5ms);
  }
  return report.destroyed;
}

// Gives CUDA time to (wrongly) release early, then says whether it did.
bool destroyed_after_a_while(const death_report& report) {
  std::this_thread::sleep_for(100ms);
  streamlike::detail::flush_released_objects();
  return report.destroyed;
}

std::thread::id callback_thread_of(cudaStream_t s) {
  static std::thread::id seen;
  GPU_REQUIRE_CUDA(cudaLaunchHostFunc(
      s, [](void*) { seen = std::this_thread::get_id(); }, nullptr));
  GPU_REQUIRE_CUDA(cudaStreamSynchronize(s));
  return seen;
}

} // namespace

TEST_CASE("on a running stream the object dies after the queued work, off CUDA's callback thread") {
  gpu_test::owned_stream s;
  auto report = std::make_shared<death_report>();
  gpu_test::gate gate;
  GPU_REQUIRE_CUDA(gate.close(s.get()));
  streamlike::retain_until_done(s.get(), tracked(report));
  CHECK_FALSE(destroyed_after_a_while(*report)); // the gated kernel still runs
  gate.open();
  GPU_REQUIRE_CUDA(cudaStreamSynchronize(s.get()));
  CHECK_FALSE(gate.timed_out());
  streamlike::detail::flush_released_objects(); // the host function ran: the release is due
  CHECK(report->destroyed);
  CHECK(report->cuda_call_ok);
  CHECK(report->thread != std::this_thread::get_id());
  CHECK(report->thread != callback_thread_of(s.get()));
}

TEST_CASE("retain_until_done keeps a shared_ptr and a shared_stream alive, through any stream_like") {
  const streamlike::shared_stream s = streamlike::shared_stream::create();
  auto value = std::make_shared<int>(7);
  std::weak_ptr<int> watch = value;
  streamlike::shared_stream extra = streamlike::shared_stream::create();
  const long before = extra.use_count();
  gpu_test::gate gate;
  GPU_REQUIRE_CUDA(gate.close(s.get()));
  streamlike::retain_until_done(s, std::move(value));
  streamlike::retain_until_done(s.view(), extra); // a copy: one more reference until done
  CHECK(extra.use_count() == before + 1);
  std::this_thread::sleep_for(50ms);
  CHECK_FALSE(watch.expired());
  gate.open();
  s.sync();
  streamlike::detail::flush_released_objects();
  CHECK(watch.expired());
  CHECK(extra.use_count() == before);
}

TEST_CASE("on a capturing stream the object outlives the graph, every instantiation and 100 replays") {
  gpu_test::owned_stream s;
  gpu_test::mapped_ints out(1);
  auto report = std::make_shared<death_report>();
  streamlike::graph g = streamlike::capture(s.get(), [&](stream_view v) {
    add_kernel<<<1, 1, 0, v.get()>>>(out.device(), 1);
    streamlike::retain_until_done(v, tracked(report));
    CHECK(v.is_capturing()); // retaining did not disturb the capture
  });
  streamlike::graph_exec first = g.instantiate();
  streamlike::graph_exec second = g.instantiate();
  g = streamlike::graph{}; // the graph itself is gone
  for (int i = 0; i < 100; ++i) {
    first.launch(s.get());
    second.launch(s.get());
  }
  GPU_REQUIRE_CUDA(cudaStreamSynchronize(s.get()));
  CHECK(out.read(0) == 200);
  CHECK_FALSE(destroyed_after_a_while(*report));
  first = streamlike::graph_exec{};
  GPU_REQUIRE_CUDA(cudaDeviceSynchronize());
  CHECK_FALSE(destroyed_after_a_while(*report)); // `second` still holds it
  second.launch(s.get());
  second = streamlike::graph_exec{}; // destroyed with a launch still queued
  GPU_REQUIRE_CUDA(cudaDeviceSynchronize());
  CHECK(destroyed_soon(*report));
  CHECK(report->cuda_call_ok);
  CHECK(out.read(0) == 201);
}

TEST_CASE("a capture discarded by an exception releases what it retained") {
  gpu_test::owned_stream s;
  auto report = std::make_shared<death_report>();
  bool caught = false;
  try {
    (void)streamlike::capture(s.get(), [&](stream_view v) {
      streamlike::retain_until_done(v, tracked(report));
      throw std::runtime_error("discard");
    });
  } catch (const std::runtime_error&) {
    caught = true;
  }
  CHECK(caught);
  CHECK(destroyed_soon(*report));
  CHECK_FALSE(stream_view{s.get()}.is_capturing());
}
