// Tests for streamlike/disable_stream_like.hpp: a type that opts out has no get_stream route
// whatever members it has, stream_like is false for it, and the opt-out touches no other type.
#include <streamlike/disable_stream_like.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_view.hpp>

#include <doctest/doctest.h>

using streamlike::stream_view;

namespace fake {

// A pool: its get_stream() hands out the next stream on every call, so it is not one stream.
struct pool {
  [[nodiscard]] stream_view get_stream() const noexcept { return stream_view::per_thread_default(); }
};
// The same shape, not opted out.
struct one_stream {
  [[nodiscard]] stream_view get_stream() const noexcept { return stream_view::per_thread_default(); }
};
// Opted out although it converts to a handle: the opt-out wins over every route.
struct converting_pool {
  operator cudaStream_t() const noexcept { return cudaStreamPerThread; } // NOLINT(google-explicit-constructor)
};

} // namespace fake

template <>
inline constexpr bool streamlike::disable_stream_like<fake::pool> = true;
template <>
inline constexpr bool streamlike::disable_stream_like<fake::converting_pool> = true;

TEST_CASE("disable_stream_like is false unless specialized") {
  static_assert(!streamlike::disable_stream_like<fake::one_stream>);
  static_assert(!streamlike::disable_stream_like<stream_view>);
  static_assert(!streamlike::disable_stream_like<cudaStream_t>);
  static_assert(streamlike::disable_stream_like<fake::pool>);
}

TEST_CASE("an opted-out type is not stream_like in any value category, whatever its routes") {
  static_assert(!streamlike::stream_like<fake::pool>);
  static_assert(!streamlike::stream_like<fake::pool&>);
  static_assert(!streamlike::stream_like<const fake::pool&>);
  static_assert(!streamlike::stream_like<fake::converting_pool&>);
  // The refusal overload returns void: generic code can test for it.
  static_assert(std::is_void_v<decltype(streamlike::get_stream(std::declval<fake::pool&>()))>);
}

TEST_CASE("the same shape without the opt-out is viewed through its member") {
  static_assert(streamlike::stream_like<fake::one_stream&>);
  const fake::one_stream s;
  CHECK(streamlike::get_stream(s) == stream_view::per_thread_default());
}

namespace fake {
// Opted out although it has the strongest route, a tag_invoke: the opt-out is checked first.
struct tag_invoke_pool {
  friend stream_view tag_invoke(streamlike::get_stream_t, const tag_invoke_pool&) noexcept {
    return stream_view::per_thread_default();
  }
};
// The same shape, not opted out.
struct tag_invoke_one_stream {
  friend stream_view tag_invoke(streamlike::get_stream_t, const tag_invoke_one_stream&) noexcept {
    return stream_view::per_thread_default();
  }
};
} // namespace fake

template <>
inline constexpr bool streamlike::disable_stream_like<fake::tag_invoke_pool> = true;

TEST_CASE("the opt-out wins over a tag_invoke route too") {
  static_assert(!streamlike::stream_like<fake::tag_invoke_pool&>);
  static_assert(!streamlike::stream_like<const fake::tag_invoke_pool&>);
  static_assert(std::is_void_v<decltype(streamlike::get_stream(std::declval<const fake::tag_invoke_pool&>()))>);
  static_assert(streamlike::stream_like<const fake::tag_invoke_one_stream&>);
  CHECK(streamlike::get_stream(fake::tag_invoke_one_stream{}) == stream_view::per_thread_default());
}
