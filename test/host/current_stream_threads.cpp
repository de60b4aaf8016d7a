// A current-stream scope ended on another thread than the one that began it: a heap-allocated
// scoped_current_stream handed over, and a C token restored elsewhere. Neither touches the ending
// thread's streams nor frees what the beginning thread's chain still holds (scripts/sanitize runs
// this under AddressSanitizer); the C restore says FAILED. The program carries the fake CUDA.
#include "fake_cuda_streams.hpp"
#include "host_support.hpp"
#include "thread_local_framework.hpp"

#include <streamlike/c/current_stream_provider.h>
#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_providers.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

namespace {

using streamlike::stream_view;

constexpr int device = 0;

/// A framework's current stream, one per thread (device 0 only).
using framework = thread_local_framework<struct framework_tag>;

/// Registers the framework for the program's duration (once, whichever test case runs first).
void register_framework() {
  static const bool registered = [] {
    streamlike_current_stream_provider p = STREAMLIKE_CURRENT_STREAM_PROVIDER_INIT;
    p.priority = 10;
    p.name = "framework";
    p.get = &framework::get;
    p.set = &framework::set;
    streamlike::register_current_stream_provider(p);
    return true;
  }();
  (void)registered;
}

/// One step of a two-thread exchange: the other thread waits until `reached` reaches `step`.
void wait_for(const std::atomic<int>& reached, int step) {
  while (reached.load() < step) std::this_thread::yield();
}

const stream_view s1 = host_test::fake_cuda_stream(0);
const stream_view s2 = host_test::fake_cuda_stream(0);
const stream_view s3 = host_test::fake_cuda_stream(0);

} // namespace

TEST_CASE("a C++ scope destroyed on another thread is left open where it began, and nothing is freed or restored") {
  register_framework();
  framework::current = s3.get(); // this thread's framework: must stay as it is
  std::unique_ptr<streamlike::scoped_current_stream> handed;
  std::atomic<int> step{0};
  stream_view seen_after{cudaStream_t{}};
  void* framework_after = nullptr;
  std::thread beginning([&] {
    const streamlike::scoped_current_stream outer{s2, device};
    handed = std::make_unique<streamlike::scoped_current_stream>(s1, device);
    step = 1;
    wait_for(step, 2); // ended on the other thread meanwhile
    seen_after = streamlike::current_stream(device);
    framework_after = framework::current;
  }); // `outer` ends here, on its own thread, with the abandoned scope still inside it
  wait_for(step, 1);
  CHECK(handed->stream() == s1);
  handed.reset();                        // on this thread
  CHECK(framework::current == s3.get()); // not set to what the other thread had before
  CHECK(streamlike::current_stream(device) == s3);
  step = 2;
  beginning.join();
  CHECK(seen_after == s1); // still open where it began
  CHECK(framework_after == s1.get());
}

TEST_CASE("a C token restored on another thread fails, and stays set where it was set") {
  register_framework();
  framework::current = s3.get();
  void* token = nullptr;
  std::atomic<int> step{0};
  stream_view seen_after{cudaStream_t{}};
  int own_restore = -1;
  std::thread beginning([&] {
    void* own = nullptr;
    REQUIRE(streamlike_current_stream_set(device, s1.get(), &own) == STREAMLIKE_CURRENT_STREAM_OK);
    REQUIRE(streamlike_current_stream_set(device, s2.get(), &token) == STREAMLIKE_CURRENT_STREAM_OK);
    step = 1;
    wait_for(step, 2);
    seen_after = streamlike::current_stream(device);
    own_restore = streamlike_current_stream_restore(own); // its own token, on its own thread
  });
  wait_for(step, 1);
  CHECK(streamlike_current_stream_restore(token) == STREAMLIKE_CURRENT_STREAM_FAILED);
  CHECK(framework::current == s3.get());
  CHECK(streamlike::current_stream(device) == s3);
  step = 2;
  beginning.join();
  CHECK(seen_after == s2);
  CHECK(own_restore == STREAMLIKE_CURRENT_STREAM_OK);
}

TEST_CASE("a scope ended on its own thread restores as before, after others were abandoned") {
  register_framework();
  framework::current = s3.get();
  void* token = nullptr;
  REQUIRE(streamlike_current_stream_set(device, s1.get(), &token) == STREAMLIKE_CURRENT_STREAM_OK);
  CHECK(framework::current == s1.get());
  CHECK(streamlike_current_stream_restore(token) == STREAMLIKE_CURRENT_STREAM_OK);
  CHECK(framework::current == s3.get());
}
