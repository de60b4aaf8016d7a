// The current stream on devices past the thread-local slots kept inline (devices 32 and up), with
// the fake CUDA set to 40 devices before anything reads the count.
#include "host_support.hpp"

#include <streamlike/c/current_stream_provider.h>
#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_providers.hpp>

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include "../fake_cuda/fake_cuda.h"

#include <thread>

namespace {

using streamlike::stream_view;

constexpr int devices = 40;

/// A new stream of the fake CUDA on `device`, the current device left as it was.
stream_view stream_on(int device) {
  fake_cuda_set_devices(devices);
  int before = 0;
  cudaStream_t handle = nullptr;
  if (cudaGetDevice(&before) != cudaSuccess || cudaSetDevice(device) != cudaSuccess ||
      cudaStreamCreate(&handle) != cudaSuccess || cudaSetDevice(before) != cudaSuccess)
    return stream_view{cudaStream_t{}};
  return stream_view{handle};
}

} // namespace

TEST_CASE("a scope on device 32 or higher is read back, on that device alone, and ends unset") {
  const stream_view on_35 = stream_on(35);
  REQUIRE(on_35.get() != nullptr);
  const stream_view on_32 = stream_on(32);
  {
    const streamlike::scoped_current_stream scope{on_35}; // its own device, 35
    CHECK(scope.device() == 35);
    CHECK(streamlike::current_stream(35) == on_35);
    CHECK(streamlike::current_stream(34) == stream_view{cudaStream_t{}});
    CHECK(streamlike::current_stream(3) == stream_view{cudaStream_t{}});
    void* from_c = nullptr;
    CHECK(streamlike_current_stream_get(35, &from_c) == STREAMLIKE_CURRENT_STREAM_OK);
    CHECK(from_c == on_35.get());
    {
      const streamlike::scoped_current_stream inner{on_32};
      CHECK(streamlike::current_stream(32) == on_32);
      CHECK(streamlike::current_stream(35) == on_35);
    }
    CHECK(streamlike::current_stream(32) == stream_view{cudaStream_t{}});
    stream_view elsewhere = on_35;
    std::thread([&] { elsewhere = streamlike::current_stream(35); }).join();
    CHECK(elsewhere == stream_view{cudaStream_t{}}); // another thread's
    const auto conflicts = streamlike::current_stream_conflicts(35);
    CHECK(conflicts.empty()); // one provider: nothing to disagree
  }
  CHECK(streamlike::current_stream(35) == stream_view{cudaStream_t{}});
  {
    const streamlike::scoped_current_stream per_thread{stream_view::per_thread_default(), 39};
    CHECK(streamlike::current_stream(39) == stream_view::per_thread_default());
  }
  CHECK(streamlike::current_stream(39) == stream_view{cudaStream_t{}});
  const auto e = host_test::thrown<std::invalid_argument>([] { (void)streamlike::current_stream(devices); });
  REQUIRE(e.has_value());
  CHECK_MESSAGE(host_test::contains(e->what(), "device 40 does not exist; expected 0..39"), e->what());
}
