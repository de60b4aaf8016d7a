// Tests for streamlike/event.hpp that need no GPU: the empty event, move-only ownership,
// event::create and record() failing without a device (naming the CUDA call), record()'s and
// wait(stream, event)'s constraint to stream_like arguments, the capture an event remembers, and
// every operation refusing an empty event by name before any CUDA call.
#include <streamlike/event.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/unique_stream.hpp>

#include "host_support.hpp"

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

using streamlike::event;
using streamlike::stream_view;
using host_test::thrown;
using host_test::device_present;
using host_test::check_no_device_error;

namespace {

template <class S>
concept recordable = requires(S&& s) {
  streamlike::record(std::forward<S>(s));
};

template <class S>
concept can_wait_on_event = requires(S&& s, const event& e) {
  streamlike::wait(std::forward<S>(s), e);
};

template <class S>
concept can_wait_external = requires(S&& s, const event& e) {
  streamlike::wait_external(std::forward<S>(s), e);
};

// The refusal of `operation` on an empty event: named, saying the event is empty, before any CUDA call.
void check_empty_refusal(const std::optional<streamlike::error>& e, const char* operation) {
  REQUIRE_MESSAGE(e.has_value(), "expected streamlike::error from ", operation);
  const std::string what = e->what();
  CHECK_MESSAGE(what.find(operation) != std::string::npos, what);
  CHECK_MESSAGE(what.find("the event is empty") != std::string::npos, what);
  CHECK(e->code() == cudaErrorInvalidResourceHandle);
}

} // namespace

TEST_CASE("event is move-only with noexcept moves; the empty event holds no handle") {
  static_assert(!std::is_copy_constructible_v<event>);
  static_assert(!std::is_copy_assignable_v<event>);
  static_assert(std::is_nothrow_move_constructible_v<event>);
  static_assert(std::is_nothrow_move_assignable_v<event>);
  static_assert(std::is_nothrow_default_constructible_v<event>);
  static_assert(std::is_nothrow_destructible_v<event>);
  static_assert(!std::is_constructible_v<event, cudaEvent_t>); // no adoption by accident

  event e;
  CHECK_FALSE(e);
  CHECK(e.get() == nullptr);
  event moved = std::move(e);
  CHECK_FALSE(moved);
  event other;
  other.swap(moved);
  CHECK_FALSE(other);
}

TEST_CASE("event_options defaults: the current device, no timing") {
  const streamlike::event_options options;
  CHECK_FALSE(options.device.has_value());
  CHECK_FALSE(options.timing); // timing costs on every record
  const streamlike::event_options timed{.timing = true};
  CHECK(timed.timing);
  CHECK_FALSE(timed.device.has_value());
}

TEST_CASE("record() takes stream_like arguments only, and never a temporary owner") {
  static_assert(recordable<stream_view>);
  static_assert(recordable<cudaStream_t>);
  static_assert(recordable<cuda::stream_ref>);
  static_assert(recordable<streamlike::shared_stream&>);
  static_assert(recordable<const streamlike::unique_stream&>);
  static_assert(!recordable<int>);
  static_assert(!recordable<std::nullptr_t>);
  static_assert(!recordable<streamlike::unique_stream>);
  static_assert(!recordable<streamlike::shared_stream>);
  static_assert(std::is_same_v<decltype(streamlike::record(std::declval<stream_view>())), event>);
}

TEST_CASE("event::create without a device throws streamlike::error naming the CUDA call") {
  if (device_present()) {
    MESSAGE("a CUDA device is present: skipping the no-device checks");
    return;
  }
  check_no_device_error(thrown<streamlike::error>([] { (void)event::create(); }), "cudaGetDevice");
  check_no_device_error(thrown<streamlike::error>([] { (void)event::create(); }), "event::create");
  check_no_device_error(thrown<streamlike::error>([] { (void)event::create({.timing = true}); }), "cudaGetDevice");
  // With a device given, the device guard is what fails first.
  check_no_device_error(thrown<streamlike::error>([] { (void)event::create({.device = 0}); }), "device_guard");
}

TEST_CASE("record() without a device throws streamlike::error naming the CUDA call") {
  if (device_present()) {
    MESSAGE("a CUDA device is present: skipping the no-device checks");
    return;
  }
  // The event goes on the stream's device, so that is asked first.
  check_no_device_error(thrown<streamlike::error>([] { (void)streamlike::record(stream_view::per_thread_default()); }),
                        "cudaStreamGetDevice");
  const streamlike::shared_stream legacy = streamlike::shared_stream::legacy_default();
  check_no_device_error(thrown<streamlike::error>([&] { (void)streamlike::record(legacy); }), "cudaStreamGetDevice");
  // A view's own record() is the owners': its errors name it.
  check_no_device_error(thrown<streamlike::error>([] { (void)stream_view::per_thread_default().record(); }),
                        "stream_view::record: cudaStreamGetDevice");
  check_no_device_error(thrown<streamlike::error>([] { (void)stream_view::legacy_default().record({.device = 0}); }),
                        "device_guard");
  // With the device given, creating the event fails.
  check_no_device_error(
      thrown<streamlike::error>([] { (void)streamlike::record(stream_view::legacy_default(), {.device = 0}); }),
      "cudaGetDevice");
}

TEST_CASE("an event remembers no capture until recorded in one; moves and swap carry it") {
  static_assert(noexcept(std::declval<const event&>().capture_id()));
  event e;
  CHECK(e.capture_id() == 0);
  event moved = std::move(e);
  CHECK(moved.capture_id() == 0);
  CHECK(e.capture_id() == 0);
}

TEST_CASE("wait(stream, event) and wait_external take stream_like consumers only, never a temporary owner") {
  static_assert(can_wait_on_event<stream_view>);
  static_assert(can_wait_on_event<cudaStream_t>);
  static_assert(can_wait_on_event<cuda::stream_ref>);
  static_assert(can_wait_on_event<streamlike::shared_stream&>);
  static_assert(can_wait_on_event<const streamlike::unique_stream&>);
  static_assert(!can_wait_on_event<int>);
  static_assert(!can_wait_on_event<std::nullptr_t>);
  static_assert(!can_wait_on_event<streamlike::unique_stream>);
  static_assert(can_wait_external<stream_view>);
  static_assert(can_wait_external<cudaStream_t>);
  static_assert(can_wait_external<streamlike::shared_stream&>);
  static_assert(!can_wait_external<int>);
  static_assert(!can_wait_external<streamlike::unique_stream>);
}

TEST_CASE("every operation refuses an empty event by name, before any CUDA call") {
  const event empty;
  const stream_view s = stream_view::legacy_default();
  check_empty_refusal(thrown<streamlike::error>([&] { empty.sync(); }), "event::sync");
  check_empty_refusal(thrown<streamlike::error>([&] { (void)empty.is_done(); }), "event::is_done");
  check_empty_refusal(thrown<streamlike::error>([&] { (void)streamlike::elapsed_ms(empty, empty); }),
                      "event::elapsed_ms (start)");
  check_empty_refusal(thrown<streamlike::error>([&] { streamlike::wait(s, empty); }), "event::wait");
  check_empty_refusal(thrown<streamlike::error>([&] { streamlike::wait_external(s, empty); }), "event::wait_external");
  event target;
  check_empty_refusal(thrown<streamlike::error>([&] { target.record(s); }), "event::record");
  CHECK(target.capture_id() == 0); // a refused record changes nothing
}
