// src/devices.hpp, the one place the library asks CUDA how many devices there are and which one
// the calling thread, a stream or a context is on: each throwing form and its non-throwing one,
// the count asked of the driver first and then remembered, a device out of range, and the same
// without a device and without a driver. Against the fake CUDA (test/fake_cuda/fake_cuda.h),
// linked with the library's objects, whose internal functions it calls. The count is remembered
// for the process, so each setup is a process of its own (test/host/meson.build): two devices
// (STREAMLIKE_FAKE_CUDA_DEVICES=2), no device (=0), and no driver (STREAMLIKE_FAKE_CUDA_DRIVER_VERSION=0,
// with the two devices a driver would show).
#include "../../src/devices.hpp"
#include "../../src/driver_entry_points.hpp"
#include "../fake_cuda/fake_cuda.h"
#include "fake_cuda_support.hpp"
#include "host_support.hpp"

#include <streamlike/error.hpp>

#include <doctest/doctest.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace {

namespace devices = streamlike::detail::devices;
using host_test::contains;
using host_test::thrown;

enum class setup { two_devices, no_device, no_driver };

bool environment_is(const char* name, const char* value) {
  const char* set = std::getenv(name);
  return set != nullptr && std::strcmp(set, value) == 0;
}

// The setup this process runs, from the environment meson gives it; any other fails the test
// rather than passing unchecked.
setup this_setup() {
  REQUIRE(fake_cuda_present() == 1);
  if (environment_is("STREAMLIKE_FAKE_CUDA_DEVICES", "0")) return setup::no_device;
  REQUIRE_MESSAGE(environment_is("STREAMLIKE_FAKE_CUDA_DEVICES", "2"),
                  "run with STREAMLIKE_FAKE_CUDA_DEVICES=2 (and STREAMLIKE_FAKE_CUDA_DRIVER_VERSION=0) or =0");
  return environment_is("STREAMLIKE_FAKE_CUDA_DRIVER_VERSION", "0") ? setup::no_driver : setup::two_devices;
}

// The CUDA error a process without CUDA gets.
cudaError_t absence(setup s) { return s == setup::no_driver ? cudaErrorInsufficientDriver : cudaErrorNoDevice; }

// Nothing the library asked left an error of CUDA's behind.
void check_no_error_left() { CHECK(cudaGetLastError() == cudaSuccess); }

// The streamlike::error `f` throws: CUDA's absence, naming `call`.
template <class F>
void check_absent_error(setup s, const std::string& call, F&& f) {
  const auto e = thrown<streamlike::error>(std::forward<F>(f));
  REQUIRE_MESSAGE(e.has_value(), "expected a streamlike::error naming ", call);
  const std::string what = e->what();
  CHECK(e->code() == absence(s));
  CHECK_MESSAGE(contains(what, "streamlike: devices_test: " + call + " failed: "), what);
  CHECK_MESSAGE(contains(what, s == setup::no_driver ? "cudaErrorInsufficientDriver (no CUDA driver found"
                                                     : "cudaErrorNoDevice (no CUDA device"),
                what);
}

// A stream of the fake on `device` (the current device stays current).
cudaStream_t stream_on(int device) {
  int before = 0;
  cudaStream_t stream = nullptr;
  REQUIRE(cudaGetDevice(&before) == cudaSuccess);
  REQUIRE(cudaSetDevice(device) == cudaSuccess);
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(cudaSetDevice(before) == cudaSuccess);
  return stream;
}

} // namespace

// First: the count is read once per process, and this case sees the first read.
TEST_CASE("the count: asked of the driver first, once, then remembered") {
  const setup s = this_setup();
  REQUIRE_MESSAGE(devices::count_if_known() == 0, "the count was read before this test case");
  fake_cuda_reset_log();
  const devices::count_answer first = devices::try_count();
  if (s == setup::two_devices) {
    CHECK(first.count == 2);
    CHECK(first.error == cudaSuccess);
    CHECK(fake_cuda_calls("cuDeviceGetCount") == 1);
    CHECK(fake_cuda_calls("cudaGetDeviceCount") == 0); // the runtime only where the driver has no answer
    CHECK(devices::count_if_known() == 2);
    CHECK(devices::count("devices_test") == 2);
  } else {
    CHECK(first.count == 0);
    CHECK(first.error == absence(s));
    CHECK(devices::cuda_absent(first.error));
    // Without a device the driver answers nothing (uninitialized); without a driver it has no
    // function to ask: the runtime's call says why, in its words.
    CHECK(fake_cuda_calls("cuDeviceGetCount") == (s == setup::no_device ? 1 : 0));
    CHECK(fake_cuda_calls("cudaGetDeviceCount") == 1);
    CHECK(devices::count_if_known() == 0);
    check_absent_error(s, "cudaGetDeviceCount", [] { (void)devices::count("devices_test"); });
  }
  check_no_error_left();

  // Remembered: a changed answer is not seen, and no call is made, by either form.
  fake_cuda_set_devices(s == setup::no_device ? 1 : 3);
  fake_cuda_reset_log();
  const devices::count_answer again = devices::try_count();
  CHECK(again.count == first.count);
  CHECK(again.error == first.error);
  if (s == setup::two_devices) {
    CHECK(devices::count("devices_test") == 2);
  } else {
    check_absent_error(s, "cudaGetDeviceCount", [] { (void)devices::count("devices_test"); });
  }
  CHECK(fake_cuda_calls("cuDeviceGetCount") == 0);
  CHECK(fake_cuda_calls("cudaGetDeviceCount") == 0);
  fake_cuda_set_devices(s == setup::no_device ? 0 : 2);
}

TEST_CASE("a named device: in range, out of range, or no count to check it against") {
  const setup s = this_setup();
  if (s == setup::two_devices) {
    CHECK_NOTHROW(devices::check_named(0, "devices_test"));
    CHECK_NOTHROW(devices::check_named(1, "devices_test"));
    CHECK(devices::exists(0));
    CHECK(devices::exists(1));
    for (const int device : {2, 40, -1}) {
      CAPTURE(device);
      const auto e = thrown<std::invalid_argument>([&] { devices::check_named(device, "devices_test"); });
      REQUIRE(e.has_value());
      CHECK(std::string(e->what()) == "streamlike: devices_test: device " + std::to_string(device) +
                                          " does not exist; expected 0..1 (2 device(s))");
      CHECK_FALSE(devices::exists(device));
    }
  } else {
    check_absent_error(s, "cudaGetDeviceCount", [] { devices::check_named(0, "devices_test"); });
    CHECK_FALSE(devices::exists(0));
  }
  check_no_error_left();
}

TEST_CASE("the current device: the runtime's answer, and the driver's first") {
  const setup s = this_setup();
  if (s != setup::two_devices) {
    check_absent_error(s, "cudaGetDevice", [] { (void)devices::current("devices_test"); });
    check_absent_error(s, "cudaGetDevice", [] { (void)devices::current_driver_first("devices_test"); });
    (void)cudaGetLastError(); // the throwing forms leave CUDA's error as CUDA left it
    CHECK(devices::current_or_minus_one() == -1);
    CHECK(devices::current_or_minus_one_driver_first() == -1);
    CHECK(devices::current_context_device_or_minus_one() == -1);
    check_no_error_left();
    return;
  }
  for (const int device : {1, 0}) {
    CAPTURE(device);
    REQUIRE(cudaSetDevice(device) == cudaSuccess);
    fake_cuda_reset_log();
    CHECK(devices::current("devices_test") == device);
    CHECK(devices::current_or_minus_one() == device);
    CHECK(fake_cuda_calls("cudaGetDevice") == 2);
    CHECK(fake_cuda_calls("cuCtxGetDevice") == 0);
    fake_cuda_reset_log();
    CHECK(devices::current_driver_first("devices_test") == device);
    CHECK(devices::current_or_minus_one_driver_first() == device);
    CHECK(devices::current_context_device_or_minus_one() == device);
    CHECK(fake_cuda_calls("cuCtxGetDevice") == 3);
    CHECK(fake_cuda_calls("cudaGetDevice") == 0); // the driver answered
  }
  check_no_error_left();
}

TEST_CASE("the device of a stream and of a context, capture-safe") {
  if (this_setup() != setup::two_devices) return; // no stream to make without CUDA
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  const cudaStream_t on_one = stream_on(1);
  CHECK(devices::of(on_one, "devices_test", "device") == 1);
  CHECK(devices::of_or_minus_one(on_one) == 1);

  CUcontext context = nullptr;
  const auto stream_get_ctx = streamlike::detail::driver::get().stream_get_ctx;
  REQUIRE(static_cast<bool>(stream_get_ctx));
  REQUIRE(stream_get_ctx(on_one, &context) == CUDA_SUCCESS);
  CHECK(devices::of_context_or_minus_one(context) == 1);

  // A default stream belongs to the current device.
  for (const cudaStream_t default_stream : {cudaStream_t{}, cudaStreamLegacy, cudaStreamPerThread}) {
    CHECK(devices::of(default_stream, "devices_test", "device") == 0);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    CHECK(devices::of_or_minus_one(default_stream) == 1);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
  }

  // Capturing: asked through the context, which invalidates nothing.
  REQUIRE(fake_cuda_set_capture(on_one, fake_cuda_active, /*global mode*/ 0) == 0);
  fake_cuda_reset_log();
  CHECK(devices::of(on_one, "devices_test", "device") == 1);
  CHECK(devices::of_or_minus_one(on_one) == 1);
  CHECK_MESSAGE(fake_cuda_invalidations() == 0, host_test::invalidations());
  CHECK(fake_cuda_calls("cudaStreamGetDevice") == 0);
  REQUIRE(fake_cuda_set_capture(on_one, fake_cuda_none, 0) == 0);

  // A handle CUDA does not know: the runtime's error, named after the operation; -1 quietly.
  const auto unknown = reinterpret_cast<cudaStream_t>(std::uintptr_t{0xdead00});
  const auto e = thrown<streamlike::error>([&] { (void)devices::of(unknown, "devices_test", "device"); });
  REQUIRE(e.has_value());
  CHECK_MESSAGE(contains(e->what(), "streamlike: devices_test::device: cudaStreamGetDevice failed"), e->what());
  (void)cudaGetLastError();
  CHECK(devices::of_or_minus_one(unknown) == -1);
  check_no_error_left();
  CHECK(cudaStreamDestroy(on_one) == cudaSuccess);
}
