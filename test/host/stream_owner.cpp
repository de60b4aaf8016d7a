// Tests for streamlike/stream_owner.hpp and enable_stream_owner.hpp: a type is a stream_owner
// exactly when it opts in with enable_stream_owner<T> and is stream_like as an lvalue; opting in
// also makes get_stream refuse its temporaries.
#include <streamlike/enable_stream_owner.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_owner.hpp>
#include <streamlike/stream_view.hpp>
#include <streamlike/unique_stream.hpp>

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <memory>

using streamlike::stream_owner;
using streamlike::stream_view;

namespace fake {

// Opted in, and stream_like through a member.
struct owner {
  [[nodiscard]] stream_view get_stream() const noexcept { return stream_view::per_thread_default(); }
};
// The same shape without the opt-in.
struct not_opted_in {
  [[nodiscard]] stream_view get_stream() const noexcept { return stream_view::per_thread_default(); }
};
// Opted in, but with no route to a stream: not an owner (nothing to view).
struct opted_in_without_route {};

} // namespace fake

namespace streamlike {
template <>
inline constexpr bool enable_stream_owner<fake::owner> = true;
template <>
inline constexpr bool enable_stream_owner<fake::opted_in_without_route> = true;
} // namespace streamlike

TEST_CASE("enable_stream_owner is false unless specialized") {
  static_assert(!streamlike::enable_stream_owner<fake::not_opted_in>);
  static_assert(!streamlike::enable_stream_owner<stream_view>);
  static_assert(!streamlike::enable_stream_owner<cudaStream_t>);
  static_assert(!streamlike::enable_stream_owner<streamlike::shared_stream>);
  static_assert(streamlike::enable_stream_owner<fake::owner>);
  static_assert(streamlike::enable_stream_owner<streamlike::unique_stream>);
}

TEST_CASE("stream_owner: opted in and stream_like as an lvalue, whatever the cv-ref qualifiers") {
  static_assert(stream_owner<fake::owner>);
  static_assert(stream_owner<fake::owner&>);
  static_assert(stream_owner<const fake::owner&>);
  static_assert(stream_owner<fake::owner&&>);
  static_assert(stream_owner<const fake::owner>);
  static_assert(stream_owner<streamlike::unique_stream>);
}

TEST_CASE("stream_owner is false without the opt-in, without a route, and for shared or viewing types") {
  static_assert(!stream_owner<fake::not_opted_in>);
  static_assert(!stream_owner<fake::opted_in_without_route>);
  static_assert(!stream_owner<streamlike::shared_stream>); // it shares; destroying a copy destroys nothing
  static_assert(!stream_owner<stream_view>);
  static_assert(!stream_owner<cudaStream_t>);
  static_assert(!stream_owner<cuda::stream_ref>);
  static_assert(!stream_owner<std::shared_ptr<fake::owner>>);
  static_assert(!stream_owner<int>);
}

TEST_CASE("opting in makes get_stream refuse temporaries; without it they are viewed") {
  // The view of a temporary owner would dangle.
  static_assert(streamlike::stream_like<fake::owner&>);
  static_assert(streamlike::stream_like<const fake::owner&>);
  static_assert(!streamlike::stream_like<fake::owner>);
  static_assert(!streamlike::stream_like<fake::owner&&>);
  // The same type without the opt-in is viewed as an rvalue too.
  static_assert(streamlike::stream_like<fake::not_opted_in>);
  static_assert(streamlike::stream_like<fake::not_opted_in&&>);

  const fake::owner o;
  CHECK(streamlike::get_stream(o) == stream_view::per_thread_default());
}
