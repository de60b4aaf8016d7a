// Tests for streamlike/capture.hpp and streamlike/capture_state.hpp that need no GPU: the scope is
// move-only, the modes are CUDA's, a default capture_state says "not capturing", and without a
// driver begin() and the capture queries fail the documented way.
#include <streamlike/capture.hpp>
#include <streamlike/capture_state.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>
#include <streamlike/unique_stream.hpp>

#include "host_support.hpp"

#include <doctest/doctest.h>

#include <type_traits>

using host_test::check_no_device_error;
using host_test::device_present;
using host_test::fake_handle;
using host_test::thrown;
using streamlike::capture_mode;
using streamlike::capture_scope;
using streamlike::capture_state;
using streamlike::capture_status;
using streamlike::stream_view;

TEST_CASE("capture_scope is move-only and cannot be made without begin()") {
  static_assert(!std::is_copy_constructible_v<capture_scope>);
  static_assert(!std::is_copy_assignable_v<capture_scope>);
  static_assert(std::is_nothrow_move_constructible_v<capture_scope>);
  static_assert(!std::is_default_constructible_v<capture_scope>);
  static_assert(std::is_nothrow_destructible_v<capture_scope>);
}

TEST_CASE("capture modes and statuses are CUDA's") {
  static_assert(static_cast<int>(capture_mode::global) == cudaStreamCaptureModeGlobal);
  static_assert(static_cast<int>(capture_mode::thread_local_) == cudaStreamCaptureModeThreadLocal);
  static_assert(static_cast<int>(capture_mode::relaxed) == cudaStreamCaptureModeRelaxed);
  static_assert(static_cast<int>(capture_status::none) == cudaStreamCaptureStatusNone);
  static_assert(static_cast<int>(capture_status::active) == cudaStreamCaptureStatusActive);
  static_assert(static_cast<int>(capture_status::invalidated) == cudaStreamCaptureStatusInvalidated);
}

TEST_CASE("a default capture_state says the stream is not capturing") {
  constexpr capture_state state{};
  static_assert(!state.is_capturing());
  static_assert(capture_state{capture_status::invalidated, 1, nullptr}.is_capturing());
  CHECK(state.id == 0);
  CHECK(state.graph == nullptr);
}

TEST_CASE("without a driver, begin() and the capture queries throw streamlike::error naming themselves") {
  if (device_present()) return;
  const stream_view fake{fake_handle(0x1000)};
  check_no_device_error(thrown<streamlike::error>([&] { (void)capture_scope::begin(fake); }), "capture_scope::begin");
  check_no_device_error(thrown<streamlike::error>([&] { (void)fake.is_capturing(); }), "stream_view::is_capturing");
  check_no_device_error(thrown<streamlike::error>([&] { (void)fake.capture_info(); }), "stream_view::capture_info");
  const streamlike::shared_stream kept = streamlike::shared_stream::keep_alive(fake, 0);
  check_no_device_error(thrown<streamlike::error>([&] { (void)kept.is_capturing(); }), "shared_stream::is_capturing");
  check_no_device_error(thrown<streamlike::error>([&] { (void)kept.capture_info(); }), "shared_stream::capture_info");
}

TEST_CASE("the owners' capture queries refuse an empty owner by name") {
  const streamlike::shared_stream empty_shared;
  const streamlike::unique_stream empty_unique;
  const auto a = thrown<streamlike::error>([&] { (void)empty_shared.is_capturing(); });
  REQUIRE(a.has_value());
  CHECK(host_test::contains(a->what(), "shared_stream::is_capturing"));
  const auto b = thrown<streamlike::error>([&] { (void)empty_unique.capture_info(); });
  REQUIRE(b.has_value());
  CHECK(host_test::contains(b->what(), "unique_stream::capture_info"));
}
