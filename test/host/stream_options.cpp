// Tests for streamlike/stream_options.hpp: the defaults (current device, priority 0,
// non-blocking) and use with designated initializers.
#include <streamlike/stream_options.hpp>

#include <doctest/doctest.h>

#include <optional>
#include <type_traits>

using streamlike::stream_options;

TEST_CASE("stream_options defaults: the current device, priority 0, non-blocking") {
  const stream_options options;
  CHECK_FALSE(options.device.has_value());
  CHECK(options.priority == 0);
  CHECK(options.non_blocking); // as cuda::stream and rmm::cuda_stream

  const stream_options braced{};
  CHECK_FALSE(braced.device.has_value());
  CHECK(braced.priority == 0);
  CHECK(braced.non_blocking);
}

TEST_CASE("stream_options is an aggregate for designated initializers; unnamed members keep their defaults") {
  static_assert(std::is_aggregate_v<stream_options>);
  static_assert(std::is_same_v<decltype(stream_options::device), std::optional<int>>);

  const stream_options on_device{.device = 1};
  CHECK(on_device.device == 1);
  CHECK(on_device.priority == 0);
  CHECK(on_device.non_blocking);

  const stream_options high_priority{.priority = -1};
  CHECK_FALSE(high_priority.device.has_value());
  CHECK(high_priority.priority == -1);
  CHECK(high_priority.non_blocking);

  const stream_options blocking{.non_blocking = false};
  CHECK_FALSE(blocking.device.has_value());
  CHECK(blocking.priority == 0);
  CHECK_FALSE(blocking.non_blocking);

  const stream_options all{.device = 0, .priority = -2, .non_blocking = false};
  CHECK(all.device == 0);
  CHECK(all.priority == -2);
  CHECK_FALSE(all.non_blocking);
}

TEST_CASE("stream_options is usable in constant expressions") {
  constexpr stream_options options{.device = 3, .priority = -1};
  static_assert(options.device == 3);
  static_assert(options.priority == -1);
  static_assert(options.non_blocking);
}
