// streamlike/device_guard.hpp on a device: the guard makes a device (or a stream's device)
// current for its scope and restores the previous one on the way out, also when an exception
// passes; a device that does not exist is refused with streamlike::error and changes nothing.
#include "gpu_support.hpp"
#include "timed_kernels.hpp"

#include <streamlike/device_guard.hpp>
#include <streamlike/error.hpp>
#include <streamlike/shared_stream.hpp>

#include <doctest/doctest.h>

#include <optional>
#include <stdexcept>
#include <string>

namespace {

int current_device() {
  int device = -1;
  GPU_REQUIRE_CUDA(cudaGetDevice(&device));
  return device;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("a guard of the current device: previous() and current() say so, nothing changes") {
  GPU_REQUIRE_CUDA(cudaSetDevice(0));
  {
    const streamlike::device_guard guard(0);
    CHECK(guard.previous() == 0);
    CHECK(guard.current() == 0);
    CHECK(current_device() == 0);
  }
  CHECK(current_device() == 0);
}

TEST_CASE("a guard of a stream makes the stream's device current") {
  GPU_REQUIRE_CUDA(cudaSetDevice(0));
  const streamlike::shared_stream s = streamlike::shared_stream::create();
  const streamlike::device_guard guard(s.view());
  CHECK(guard.current() == s.device());
  CHECK(current_device() == s.device());
}

TEST_CASE("an exception passing the guard still restores the device") {
  GPU_REQUIRE_CUDA(cudaSetDevice(0));
  const int other = gpu_test::device_count() >= 2 ? 1 : 0;
  if (other == 0)
    MESSAGE("one CUDA device: the guard switches to the device already current (two GPUs test a real switch)");
  bool caught = false;
  try {
    const streamlike::device_guard guard(other);
    CHECK(current_device() == other);
    throw std::runtime_error("passing through");
  } catch (const std::runtime_error&) {
    caught = true;
  }
  CHECK(caught);
  CHECK_MESSAGE(current_device() == 0,
                "after the exception the current device is " << current_device() << ", expected 0");
}

TEST_CASE("a device that does not exist: streamlike::error naming cudaSetDevice, and the current device stays") {
  GPU_REQUIRE_CUDA(cudaSetDevice(0));
  const int missing = gpu_test::device_count();
  std::optional<streamlike::error> e;
  try {
    const streamlike::device_guard guard(missing);
  } catch (const streamlike::error& caught) {
    e = caught;
  }
  REQUIRE_MESSAGE(e.has_value(), "device_guard(" << missing << ") did not throw streamlike::error");
  CHECK_MESSAGE(contains(e->what(), "cudaSetDevice"), e->what());
  CHECK(e->code() == cudaErrorInvalidDevice);
  (void)cudaGetLastError(); // the failed call's error was reported by the exception; see error.cu
  CHECK(current_device() == 0);
}
