// Tests for streamlike/device_guard.hpp that need no GPU: the guard is a scoped, non-copyable,
// non-movable object made only explicitly, and without a device its constructors throw
// streamlike::error naming the CUDA call that failed.
#include <streamlike/device_guard.hpp>
#include <streamlike/error.hpp>

#include "host_support.hpp"

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

using streamlike::device_guard;
using streamlike::stream_view;
using host_test::thrown;
using host_test::device_present;
using host_test::check_no_device_error;

TEST_CASE("device_guard is scoped: not copyable, not movable, made only explicitly, never throws when destroyed") {
  static_assert(!std::is_copy_constructible_v<device_guard>);
  static_assert(!std::is_move_constructible_v<device_guard>);
  static_assert(!std::is_copy_assignable_v<device_guard>);
  static_assert(!std::is_move_assignable_v<device_guard>);
  static_assert(!std::is_default_constructible_v<device_guard>);
  static_assert(std::is_nothrow_destructible_v<device_guard>);
  static_assert(std::is_constructible_v<device_guard, int>);
  static_assert(std::is_constructible_v<device_guard, stream_view>);
  static_assert(std::is_constructible_v<device_guard, cudaStream_t>);
  static_assert(!std::is_convertible_v<int, device_guard>);
  static_assert(!std::is_convertible_v<stream_view, device_guard>);
  static_assert(noexcept(std::declval<const device_guard&>().previous()));
  static_assert(noexcept(std::declval<const device_guard&>().current()));
}

TEST_CASE("device_guard(device) without a device throws streamlike::error naming cudaGetDevice") {
  if (device_present()) {
    MESSAGE("a CUDA device is present: skipping the no-device checks");
    return;
  }
  check_no_device_error(thrown<streamlike::error>([] { const device_guard guard(0); }), "device_guard: cudaGetDevice");
  check_no_device_error(thrown<streamlike::error>([] { const device_guard guard(1); }), "cudaGetDevice");
}

TEST_CASE("device_guard(stream) without a device throws streamlike::error naming cudaStreamGetDevice") {
  if (device_present()) {
    MESSAGE("a CUDA device is present: skipping the no-device checks");
    return;
  }
  // The stream's device is asked first.
  check_no_device_error(thrown<streamlike::error>([] { const device_guard guard(stream_view::per_thread_default()); }),
                        "cudaStreamGetDevice");
  check_no_device_error(thrown<streamlike::error>([] { const device_guard guard(stream_view::legacy_default()); }),
                        "cudaStreamGetDevice");
}
