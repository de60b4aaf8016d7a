// Tests for streamlike/error.hpp (and src/error.cpp): streamlike::error carries the CUDA error
// code, and its message names the operation, the error's name and its text, which says "no CUDA
// driver found" / "no CUDA device" where CUDA's own text would mislead.
#include <streamlike/error.hpp>
#include <streamlike/shared_stream.hpp>

#include "host_support.hpp"

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

using host_test::contains;

TEST_CASE("streamlike::error is a std::runtime_error") {
  static_assert(std::is_base_of_v<std::runtime_error, streamlike::error>);
  static_assert(std::is_convertible_v<streamlike::error*, std::runtime_error*>); // publicly
  // Exceptions are copied when thrown and caught; copying must not throw.
  static_assert(std::is_nothrow_copy_constructible_v<streamlike::error>);
  static_assert(noexcept(std::declval<const streamlike::error&>().code()));

  CHECK_THROWS_AS(throw streamlike::error(cudaErrorInvalidValue, "op"), std::runtime_error);
}

TEST_CASE("streamlike::error carries the code and names the operation, the error and its text") {
  const streamlike::error e(cudaErrorInvalidValue, "cudaStreamQuery");
  CHECK(e.code() == cudaErrorInvalidValue);
  const std::string what = e.what();
  CHECK(contains(what, "cudaStreamQuery"));
  CHECK(contains(what, "cudaErrorInvalidValue"));
  CHECK(contains(what, cudaGetErrorString(cudaErrorInvalidValue)));
}

TEST_CASE("streamlike::error: another code gives another message") {
  const streamlike::error e(cudaErrorMemoryAllocation, "cudaMallocAsync");
  CHECK(e.code() == cudaErrorMemoryAllocation);
  const std::string what = e.what();
  CHECK(contains(what, "cudaMallocAsync"));
  CHECK(contains(what, "cudaErrorMemoryAllocation"));
  CHECK(contains(what, cudaGetErrorString(cudaErrorMemoryAllocation)));
  CHECK_FALSE(contains(what, "cudaErrorInvalidValue"));
}

TEST_CASE("detail::throw_if_error does nothing on cudaSuccess") {
  CHECK_NOTHROW(streamlike::detail::throw_if_error(cudaSuccess, "cudaStreamSynchronize"));
}

TEST_CASE("detail::throw_if_error throws streamlike::error on failure") {
  try {
    streamlike::detail::throw_if_error(cudaErrorInvalidResourceHandle, "cudaStreamGetFlags");
    FAIL("throw_if_error did not throw");
  } catch (const streamlike::error& e) {
    CHECK(e.code() == cudaErrorInvalidResourceHandle);
    const std::string what = e.what();
    CHECK(contains(what, "cudaStreamGetFlags"));
    CHECK(contains(what, "cudaErrorInvalidResourceHandle"));
  }
}

TEST_CASE("detail::throw_error always throws streamlike::error") {
  CHECK_THROWS_AS(streamlike::detail::throw_error(cudaErrorNotReady, "cudaEventQuery"), streamlike::error);
  CHECK_THROWS_WITH_AS(streamlike::detail::throw_error(cudaErrorNotReady, "cudaEventQuery"),
                       doctest::Contains("cudaErrorNotReady"), streamlike::error);
}

TEST_CASE("a real cudart call that fails without a device is reported by name") {
  int count = -1;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code == cudaSuccess) {
    // A machine with a GPU and a driver: nothing fails here, so there is nothing to report.
    MESSAGE("cudaGetDeviceCount succeeded (" << count << " devices): skipping the no-device check");
    CHECK_NOTHROW(streamlike::detail::throw_if_error(code, "cudaGetDeviceCount"));
    return;
  }
  // Without a driver the runtime says cudaErrorInsufficientDriver; with a driver and no device,
  // cudaErrorNoDevice. Which one depends on the machine.
  CHECK((code == cudaErrorNoDevice || code == cudaErrorInsufficientDriver));
  // Reset the sticky error state so later cudart calls in this process are not confused.
  (void)cudaGetLastError();
  try {
    streamlike::detail::throw_if_error(code, "cudaGetDeviceCount");
    FAIL("throw_if_error did not throw for " << cudaGetErrorName(code));
  } catch (const streamlike::error& e) {
    CHECK(e.code() == code);
    const std::string what = e.what();
    CHECK(contains(what, "cudaGetDeviceCount"));
    CHECK(contains(what, cudaGetErrorName(code)));
    CHECK(contains(what, streamlike::cuda_error_text(code)));
  }
}

namespace {
// The installed driver's CUDA version, 0 where none is installed (cudaDriverGetVersion's rule).
int driver_version() {
  int version = -1;
  REQUIRE(cudaDriverGetVersion(&version) == cudaSuccess);
  return version;
}
} // namespace

TEST_CASE("cuda_error_text: without a driver it says none was found and what to install, not 'insufficient'") {
  const std::string text = streamlike::cuda_error_text(cudaErrorInsufficientDriver);
  CHECK(text.starts_with("cudaErrorInsufficientDriver ("));
  int runtime = 0;
  REQUIRE(cudaRuntimeGetVersion(&runtime) == cudaSuccess);
  const int driver = driver_version();
  if (driver == 0) {
    CHECK_MESSAGE(contains(text, "no CUDA driver found"), text);
    CHECK_MESSAGE(contains(text, "Install the NVIDIA driver"), text);
    CHECK_MESSAGE(!contains(text, "insufficient"), text);
  } else if (driver < runtime) {
    // A driver older than the runtime: both versions, and what to do.
    CHECK_MESSAGE(contains(text, "update the NVIDIA driver"), text);
  } else {
    // A driver new enough: CUDA would not say this for the driver's version; its own text stays.
    MESSAGE("the CUDA driver (" << driver << ") is new enough for the runtime (" << runtime << ")");
    CHECK(text == std::string("cudaErrorInsufficientDriver (") + cudaGetErrorString(cudaErrorInsufficientDriver) + ")");
  }
}

TEST_CASE("cuda_error_text: cudaErrorNoDevice says there is no CUDA device and where to look") {
  const std::string text = streamlike::cuda_error_text(cudaErrorNoDevice);
  CHECK(text.starts_with("cudaErrorNoDevice (no CUDA device"));
  CHECK(contains(text, "nvidia-smi"));
  CHECK(contains(text, "CUDA_VISIBLE_DEVICES"));
}

TEST_CASE("cuda_error_text: other errors keep CUDA's own text") {
  CHECK(streamlike::cuda_error_text(cudaErrorInvalidValue) ==
        std::string("cudaErrorInvalidValue (") + cudaGetErrorString(cudaErrorInvalidValue) + ")");
}

TEST_CASE("shared_stream::create without a driver says 'no CUDA driver found'") {
  if (driver_version() != 0) {
    MESSAGE("a CUDA driver is installed: this machine cannot show the no-driver text");
    return;
  }
  try {
    (void)streamlike::shared_stream::create();
    FAIL("shared_stream::create() succeeded without a driver");
  } catch (const streamlike::error& e) {
    const std::string what = e.what();
    CHECK(e.code() == cudaErrorInsufficientDriver);
    CHECK_MESSAGE(contains(what, "shared_stream::create"), what);
    CHECK_MESSAGE(contains(what, "no CUDA driver found"), what);
    CHECK_MESSAGE(!contains(what, "driver version is insufficient"), what);
  }
}
