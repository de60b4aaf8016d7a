// streamlike/error.hpp on a device: a CUDA failure reported as streamlike::error is reported once.
// The runtime also records every failed call for the next cudaGetLastError(); left there, it
// surfaces again at the caller's next launch check (`kernel<<<...>>>(); cudaGetLastError()`) as if
// that kernel had failed. CCCL (_CCCL_TRY_CUDA_API) and RMM (RMM_CUDA_TRY) clear it before they
// throw, and streamlike's own is_done() clears "not ready" for the same reason.
#include "gpu_support.hpp"
#include "timed_kernels.hpp"

#include <streamlike/device_guard.hpp>
#include <streamlike/error.hpp>
#include <streamlike/event.hpp>
#include <streamlike/shared_stream.hpp>

#include <doctest/doctest.h>

#include <functional>
#include <string>

namespace {

// Runs `fail`, which must throw streamlike::error, and returns what cudaGetLastError() says after.
cudaError_t left_behind(const std::function<void()>& fail) {
  (void)cudaGetLastError(); // start clean
  bool thrown = false;
  try {
    fail();
  } catch (const streamlike::error&) {
    thrown = true;
  }
  REQUIRE_MESSAGE(thrown, "the call did not throw streamlike::error");
  return cudaGetLastError();
}

} // namespace

TEST_CASE("a failed call reported as streamlike::error leaves nothing for the next cudaGetLastError") {
  SUBCASE("device_guard of a device that does not exist (cudaSetDevice)") {
    const int missing = gpu_test::device_count();
    const cudaError_t left = left_behind([&] { const streamlike::device_guard guard(missing); });
    CHECK_MESSAGE(left == cudaSuccess,
                  "cudaGetLastError() after the caught streamlike::error: " << cudaGetErrorName(left));
  }
  SUBCASE("elapsed_ms of events without timing (cudaEventElapsedTime)") {
    const streamlike::shared_stream s = streamlike::shared_stream::create();
    streamlike::event a = streamlike::event::create();
    streamlike::event b = streamlike::event::create();
    a.record(s.view());
    b.record(s.view());
    b.sync();
    const cudaError_t left = left_behind([&] { (void)elapsed_ms(a, b); });
    CHECK_MESSAGE(left == cudaSuccess,
                  "cudaGetLastError() after the caught streamlike::error: " << cudaGetErrorName(left));
  }
}
