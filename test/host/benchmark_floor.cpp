// Tests for streamlike/detail/benchmark_floor.hpp (src/stream_lifecycle.cpp): the raw create and
// destroy a benchmark measures stream creation against reports a failure as the library does.
#include <streamlike/detail/benchmark_floor.hpp>

#include "host_support.hpp"

#include <doctest/doctest.h>

using host_test::check_no_device_error;
using host_test::device_present;
using host_test::thrown;

TEST_CASE("create_and_destroy_raw_stream without a device throws streamlike::error naming itself and the call") {
  if (device_present()) {
    MESSAGE("a CUDA device is present: the floor creates and destroys a stream");
    CHECK_NOTHROW(streamlike::detail::create_and_destroy_raw_stream());
    return;
  }
  const auto e = thrown<streamlike::error>([] { streamlike::detail::create_and_destroy_raw_stream(); });
  check_no_device_error(e, "create_and_destroy_raw_stream: cudaStreamCreateWithPriority");
}
