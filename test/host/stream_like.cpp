// Tests for streamlike/stream_like.hpp: the concepts stream_like and nothrow_stream_like, and a
// generic function constrained on stream_like, as a user would write one.
#include <streamlike/stream_like.hpp>

#include "host_support.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

using streamlike::get_stream_t;
using streamlike::nothrow_stream_like;
using streamlike::stream_like;
using streamlike::stream_view;
using host_test::fake_handle;

namespace lib {

struct by_tag_invoke {
  friend stream_view tag_invoke(get_stream_t, const by_tag_invoke&) noexcept { return fake_handle(0x1000); }
};
struct by_throwing_tag_invoke {
  friend stream_view tag_invoke(get_stream_t, const by_throwing_tag_invoke&) { return fake_handle(0x1000); }
};
struct by_conversion {
  operator cudaStream_t() const noexcept { return fake_handle(0x2000); }
};
struct by_throwing_conversion {
  operator cudaStream_t() const { return fake_handle(0x2000); }
};
struct by_stream_ref_conversion {
  operator cuda::stream_ref() const noexcept { return cuda::stream_ref{fake_handle(0x2100)}; }
};
struct by_get_stream_member {
  cudaStream_t get_stream() const noexcept { return fake_handle(0x3000); }
};
struct by_throwing_get_stream_member {
  cudaStream_t get_stream() const { return fake_handle(0x3000); }
};
struct by_stream_member {
  cudaStream_t stream() const noexcept { return fake_handle(0x4000); }
};
struct lvalue_only_member {
  cudaStream_t get_stream() const& noexcept { return fake_handle(0x3000); }
  cudaStream_t get_stream() && = delete;
};
struct owner {
  cudaStream_t stream() const noexcept { return fake_handle(0x5000); }
};
struct plain {};
struct members_return_no_handle {
  int get_stream() const noexcept { return 0; }
  void* stream() const noexcept { return nullptr; }
};

} // namespace lib

namespace foreign {
struct library_stream {};
} // namespace foreign

namespace streamlike {
inline stream_view tag_invoke(get_stream_t, const foreign::library_stream&) noexcept { return fake_handle(0x6000); }
template <>
inline constexpr bool enable_stream_owner<lib::owner> = true;
} // namespace streamlike

// A generic function as the README recommends: accept anything stream-like, convert once at the
// API edge, pass the view inward.
template <stream_like Stream>
stream_view accept(Stream&& stream) noexcept(nothrow_stream_like<Stream>) {
  return streamlike::get_stream(std::forward<Stream>(stream));
}

template <class T>
concept accepted = requires(T&& t) {
  accept(std::forward<T>(t));
};

TEST_CASE("stream_like holds for handle types") {
  static_assert(stream_like<cudaStream_t>);
  static_assert(stream_like<cudaStream_t&>);
  static_assert(stream_like<const cudaStream_t&>);
  static_assert(stream_like<stream_view>);
  static_assert(stream_like<stream_view&>);
  static_assert(stream_like<const stream_view&>);
  static_assert(stream_like<cuda::stream_ref>);
  static_assert(stream_like<const cuda::stream_ref&>);
}

TEST_CASE("stream_like holds for every opt-in route") {
  static_assert(stream_like<lib::by_tag_invoke>);
  static_assert(stream_like<foreign::library_stream>);
  static_assert(stream_like<lib::by_conversion>);
  static_assert(stream_like<lib::by_stream_ref_conversion>);
  static_assert(stream_like<lib::by_get_stream_member>);
  static_assert(stream_like<lib::by_stream_member>);
  static_assert(stream_like<const lib::by_stream_member&>);
}

TEST_CASE("stream_like follows value category") {
  static_assert(stream_like<lib::lvalue_only_member&>);
  static_assert(stream_like<const lib::lvalue_only_member&>);
  static_assert(!stream_like<lib::lvalue_only_member>);
  static_assert(!stream_like<lib::lvalue_only_member&&>);

  // An owner (enable_stream_owner) is stream_like as an lvalue only: the view of a temporary
  // owner would dangle.
  static_assert(stream_like<lib::owner&>);
  static_assert(stream_like<const lib::owner&>);
  static_assert(!stream_like<lib::owner>);
  static_assert(!stream_like<lib::owner&&>);
  static_assert(!stream_like<const lib::owner&&>);
}

TEST_CASE("stream_like is false for integers, bool, nullptr, void* and types without a route") {
  static_assert(!stream_like<int>);
  static_assert(!stream_like<long>);
  static_assert(!stream_like<std::uintptr_t>);
  static_assert(!stream_like<bool>);
  static_assert(!stream_like<std::nullptr_t>);
  static_assert(!stream_like<void*>);
  static_assert(!stream_like<const void*>);
  static_assert(!stream_like<lib::plain>);
  static_assert(!stream_like<lib::members_return_no_handle>);
  static_assert(!nothrow_stream_like<int>);
  static_assert(!nothrow_stream_like<lib::plain>);
}

TEST_CASE("nothrow_stream_like holds exactly where the route is noexcept") {
  static_assert(nothrow_stream_like<cudaStream_t>);
  static_assert(nothrow_stream_like<stream_view>);
  static_assert(nothrow_stream_like<cuda::stream_ref>);
  static_assert(nothrow_stream_like<lib::by_tag_invoke>);
  static_assert(nothrow_stream_like<lib::by_conversion>);
  static_assert(nothrow_stream_like<lib::by_get_stream_member>);
  static_assert(nothrow_stream_like<lib::owner&>);

  static_assert(stream_like<lib::by_throwing_tag_invoke>);
  static_assert(!nothrow_stream_like<lib::by_throwing_tag_invoke>);
  static_assert(stream_like<lib::by_throwing_conversion>);
  static_assert(!nothrow_stream_like<lib::by_throwing_conversion>);
  static_assert(stream_like<lib::by_throwing_get_stream_member>);
  static_assert(!nothrow_stream_like<lib::by_throwing_get_stream_member>);
}

TEST_CASE("a function constrained on stream_like accepts every kind of stream and returns its view") {
  const cudaStream_t handle = fake_handle(0x7000);
  CHECK(accept(handle) == handle);
  CHECK(accept(stream_view{handle}) == handle);
  CHECK(accept(cuda::stream_ref{handle}) == handle);
  CHECK(accept(stream_view::legacy_default()) == cudaStreamLegacy);
  CHECK(accept(cudaStreamPerThread) == stream_view::per_thread_default());
  CHECK(accept(lib::by_tag_invoke{}) == fake_handle(0x1000));
  CHECK(accept(foreign::library_stream{}) == fake_handle(0x6000));
  CHECK(accept(lib::by_conversion{}) == fake_handle(0x2000));
  CHECK(accept(lib::by_stream_ref_conversion{}) == fake_handle(0x2100));
  CHECK(accept(lib::by_get_stream_member{}) == fake_handle(0x3000));
  CHECK(accept(lib::by_stream_member{}) == fake_handle(0x4000));
  const lib::owner o;
  CHECK(accept(o) == fake_handle(0x5000));

  // noexcept of the generic function follows the argument.
  static_assert(noexcept(accept(handle)));
  static_assert(noexcept(accept(lib::by_tag_invoke{})));
  static_assert(!noexcept(accept(lib::by_throwing_tag_invoke{})));
}

TEST_CASE("a function constrained on stream_like rejects what is not a stream, without a hard error") {
  // The refusal overload of get_stream is never instantiated by the constraint check, so these
  // are plain `false`, not compile errors.
  static_assert(accepted<cudaStream_t>);
  static_assert(accepted<lib::owner&>);
  static_assert(!accepted<int>);
  static_assert(!accepted<std::nullptr_t>);
  static_assert(!accepted<void*>);
  static_assert(!accepted<bool>);
  static_assert(!accepted<lib::plain>);
  static_assert(!accepted<lib::owner>);
}
