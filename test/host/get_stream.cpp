// Tests for streamlike/get_stream.hpp: every route of the get_stream CPO, the priority between
// routes, noexcept propagation, value categories, constexpr use, the rvalue-owner rule and the
// refusals.
//
// Each route returns its own fake handle, so a test sees which route won. Fake handles are
// distinct addresses that are never dereferenced: nothing here needs a GPU.
#include <streamlike/disable_stream_like.hpp>
#include <streamlike/get_stream.hpp>

#include <streamlike/stream_like.hpp>

#include "host_support.hpp"

#include <doctest/doctest.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

using streamlike::get_stream_t;
using streamlike::stream_view;
using host_test::fake_handle;

namespace {

// One fake handle per route.
constexpr std::uintptr_t by_tag_invoke = 0x1000;
constexpr std::uintptr_t by_conversion = 0x2000;
constexpr std::uintptr_t by_stream_ref_conversion = 0x2100;
constexpr std::uintptr_t by_get_stream_member = 0x3000;
constexpr std::uintptr_t by_stream_member = 0x4000;

// get_stream(T) yields a stream_view: the route applies.
template <class T>
constexpr bool views = std::same_as<std::invoke_result_t<const get_stream_t&, T>, stream_view>;

// get_stream(T) refuses a temporary owner with temporary_owner_use_export_stream<owner>, whose name
// says what to do wherever the result goes (calling it would not compile).
template <class T>
constexpr bool refused_as_temporary_owner =
    std::same_as<std::invoke_result_t<const get_stream_t&, T>,
                 streamlike::temporary_owner_use_export_stream<std::remove_cvref_t<T>>>;

// get_stream(T) lands on a refusal overload: void for every reason but a temporary owner (calling
// it would not compile).
template <class T>
constexpr bool refused = std::is_void_v<std::invoke_result_t<const get_stream_t&, T>> || refused_as_temporary_owner<T>;

} // namespace

// --- Route 1: tag_invoke --------------------------------------------------------------------------

namespace lib {

struct hidden_friend {
  friend stream_view tag_invoke(get_stream_t, const hidden_friend&) noexcept { return fake_handle(by_tag_invoke); }
};

// tag_invoke may return any handle type, not only stream_view.
struct friend_returns_handle {
  friend cudaStream_t tag_invoke(get_stream_t, const friend_returns_handle&) noexcept {
    return fake_handle(by_tag_invoke);
  }
};
struct friend_returns_stream_ref {
  friend cuda::stream_ref tag_invoke(get_stream_t, const friend_returns_stream_ref&) noexcept {
    return cuda::stream_ref{fake_handle(by_tag_invoke)};
  }
};

// An overload in the type's own namespace, not a friend.
struct namespace_overload {};
inline stream_view tag_invoke(get_stream_t, const namespace_overload&) noexcept { return fake_handle(by_tag_invoke); }

struct throwing_friend {
  friend stream_view tag_invoke(get_stream_t, const throwing_friend&) { return fake_handle(by_tag_invoke); }
};

// A tag_invoke that returns something that is not a stream is a mistake, refused, not ignored.
struct friend_returns_int {
  friend int tag_invoke(get_stream_t, const friend_returns_int&) noexcept { return 0; }
};

} // namespace lib

// A type its author cannot touch...
namespace foreign {
struct library_stream {
  cudaStream_t raw;
};
} // namespace foreign

// ...opted in from namespace streamlike: ADL searches the tag's namespace too.
namespace streamlike {
inline stream_view tag_invoke(get_stream_t, const foreign::library_stream& s) noexcept { return s.raw; }
} // namespace streamlike

TEST_CASE("route 1: a tag_invoke hidden friend") {
  static_assert(views<const lib::hidden_friend&>);
  CHECK(streamlike::get_stream(lib::hidden_friend{}) == fake_handle(by_tag_invoke));
  CHECK(streamlike::get_stream(lib::friend_returns_handle{}) == fake_handle(by_tag_invoke));
  CHECK(streamlike::get_stream(lib::friend_returns_stream_ref{}) == fake_handle(by_tag_invoke));
}

TEST_CASE("route 1: a tag_invoke overload in the type's namespace") {
  CHECK(streamlike::get_stream(lib::namespace_overload{}) == fake_handle(by_tag_invoke));
}

TEST_CASE("route 1: a tag_invoke overload in namespace streamlike for a foreign type") {
  const foreign::library_stream s{fake_handle(0x5000)};
  static_assert(views<const foreign::library_stream&>);
  CHECK(streamlike::get_stream(s) == fake_handle(0x5000));
}

TEST_CASE("route 1: a tag_invoke that returns no handle is refused") {
  static_assert(streamlike::tag_invocable<get_stream_t, const lib::friend_returns_int&>);
  static_assert(refused<const lib::friend_returns_int&>);
  static_assert(!streamlike::stream_like<const lib::friend_returns_int&>);
}

// --- Route 2: handles and types convertible to them ----------------------------------------------

namespace lib {

struct converts_to_handle {
  operator cudaStream_t() const noexcept { return fake_handle(by_conversion); }
};

struct converts_to_stream_ref_only {
  operator cuda::stream_ref() const noexcept { return cuda::stream_ref{fake_handle(by_stream_ref_conversion)}; }
};

// Like rmm::cuda_stream_view: converts to both. The cudaStream_t conversion is taken, so the call
// is never ambiguous.
struct converts_to_both {
  operator cudaStream_t() const noexcept { return fake_handle(by_conversion); }
  operator cuda::stream_ref() const noexcept { return cuda::stream_ref{fake_handle(by_stream_ref_conversion)}; }
};

struct converts_throwing {
  operator cudaStream_t() const { return fake_handle(by_conversion); }
};
struct converts_to_stream_ref_throwing {
  operator cuda::stream_ref() const { return cuda::stream_ref{fake_handle(by_stream_ref_conversion)}; }
};

// Only implicit conversions are routes.
struct converts_explicitly {
  explicit operator cudaStream_t() const noexcept { return fake_handle(by_conversion); }
};

} // namespace lib

TEST_CASE("route 2: cudaStream_t, stream_view and cuda::stream_ref are handles") {
  const cudaStream_t handle = fake_handle(0x6000);
  static_assert(views<cudaStream_t>);
  static_assert(views<cudaStream_t&>);
  static_assert(views<const cudaStream_t&>);
  static_assert(views<stream_view>);
  static_assert(views<const stream_view&>);
  static_assert(views<cuda::stream_ref>);
  static_assert(views<const cuda::stream_ref&>);

  CHECK(streamlike::get_stream(handle) == handle);
  const stream_view view{handle};
  CHECK(streamlike::get_stream(view) == handle);
  CHECK(streamlike::get_stream(stream_view{handle}) == handle);
  const cuda::stream_ref ref{handle};
  CHECK(streamlike::get_stream(ref) == handle);
  CHECK(streamlike::get_stream(cuda::stream_ref{handle}) == handle);
  // The default streams pass through unchanged.
  CHECK(streamlike::get_stream(cudaStreamLegacy) == stream_view::legacy_default());
  CHECK(streamlike::get_stream(cudaStreamPerThread) == stream_view::per_thread_default());
  // Handle 0 stays 0: get_stream does not decide what it means (default_stream.hpp does).
  CHECK(streamlike::get_stream(cudaStream_t{}) == cudaStream_t{});
}

TEST_CASE("route 2: a type implicitly convertible to cudaStream_t") {
  CHECK(streamlike::get_stream(lib::converts_to_handle{}) == fake_handle(by_conversion));
}

TEST_CASE("route 2: a type convertible only to cuda::stream_ref") {
  static_assert(!std::convertible_to<lib::converts_to_stream_ref_only, cudaStream_t>);
  CHECK(streamlike::get_stream(lib::converts_to_stream_ref_only{}) == fake_handle(by_stream_ref_conversion));
}

TEST_CASE("route 2: a type convertible to both cudaStream_t and cuda::stream_ref uses cudaStream_t") {
  CHECK(streamlike::get_stream(lib::converts_to_both{}) == fake_handle(by_conversion));
}

TEST_CASE("route 2: an explicit conversion is not a route") {
  static_assert(refused<lib::converts_explicitly>);
  static_assert(refused<const lib::converts_explicitly&>);
}

// --- Route 3: members -----------------------------------------------------------------------------

namespace lib {

struct member_get_stream {
  cudaStream_t get_stream() const noexcept { return fake_handle(by_get_stream_member); }
};
struct member_stream {
  cudaStream_t stream() const noexcept { return fake_handle(by_stream_member); }
};
// Members may return any handle type.
struct member_returns_view {
  stream_view get_stream() const noexcept { return fake_handle(by_get_stream_member); }
};
struct member_returns_stream_ref {
  cuda::stream_ref stream() const noexcept { return cuda::stream_ref{fake_handle(by_stream_member)}; }
};

struct member_get_stream_throwing {
  cudaStream_t get_stream() const { return fake_handle(by_get_stream_member); }
};
struct member_stream_throwing {
  cudaStream_t stream() const { return fake_handle(by_stream_member); }
};

// A member get_stream() that returns something that is not a handle does not count; the next route
// (here stream()) wins.
struct get_stream_returns_int {
  int get_stream() const noexcept { return 0; }
  cudaStream_t stream() const noexcept { return fake_handle(by_stream_member); }
};
struct get_stream_returns_void_pointer {
  void* get_stream() const noexcept { return nullptr; }
  cudaStream_t stream() const noexcept { return fake_handle(by_stream_member); }
};
struct members_return_no_handle {
  int get_stream() const noexcept { return 0; }
  bool stream() const noexcept { return false; }
};

// A member that refuses temporaries: the view of a temporary's stream would dangle.
struct lvalue_only_member {
  cudaStream_t get_stream() const& noexcept { return fake_handle(by_get_stream_member); }
  cudaStream_t get_stream() && = delete;
};

} // namespace lib

TEST_CASE("route 3: member get_stream()") {
  CHECK(streamlike::get_stream(lib::member_get_stream{}) == fake_handle(by_get_stream_member));
  CHECK(streamlike::get_stream(lib::member_returns_view{}) == fake_handle(by_get_stream_member));
}

TEST_CASE("route 3: member stream()") {
  CHECK(streamlike::get_stream(lib::member_stream{}) == fake_handle(by_stream_member));
  CHECK(streamlike::get_stream(lib::member_returns_stream_ref{}) == fake_handle(by_stream_member));
}

TEST_CASE("route 3: a member returning a non-handle is ignored and the next route wins") {
  CHECK(streamlike::get_stream(lib::get_stream_returns_int{}) == fake_handle(by_stream_member));
  CHECK(streamlike::get_stream(lib::get_stream_returns_void_pointer{}) == fake_handle(by_stream_member));
  static_assert(refused<lib::members_return_no_handle>);
}

TEST_CASE("route 3: members are called with the argument's value category") {
  static_assert(views<lib::lvalue_only_member&>);
  static_assert(views<const lib::lvalue_only_member&>);
  static_assert(refused<lib::lvalue_only_member>);
  static_assert(refused<lib::lvalue_only_member&&>);
  const lib::lvalue_only_member m;
  CHECK(streamlike::get_stream(m) == fake_handle(by_get_stream_member));
}

#if STREAMLIKE_HAS_CUDA_GET_STREAM
namespace lib {
struct member_query {
  cudaStream_t query(cuda::get_stream_t) const noexcept { return fake_handle(0x7000); }
};
struct member_stream_and_query {
  cudaStream_t stream() const noexcept { return fake_handle(by_stream_member); }
  cudaStream_t query(cuda::get_stream_t) const noexcept { return fake_handle(0x7000); }
};
} // namespace lib

TEST_CASE("route 3: member query(cuda::get_stream_t), after stream()") {
  CHECK(streamlike::get_stream(lib::member_query{}) == fake_handle(0x7000));
  CHECK(streamlike::get_stream(lib::member_stream_and_query{}) == fake_handle(by_stream_member));
}
#endif

// --- Priority between routes ----------------------------------------------------------------------

namespace lib {

// Every route at once, each with its own handle.
struct all_routes {
  friend stream_view tag_invoke(get_stream_t, const all_routes&) noexcept { return fake_handle(by_tag_invoke); }
  operator cudaStream_t() const noexcept { return fake_handle(by_conversion); }
  cudaStream_t get_stream() const noexcept { return fake_handle(by_get_stream_member); }
  cudaStream_t stream() const noexcept { return fake_handle(by_stream_member); }
};
struct conversion_and_members {
  operator cudaStream_t() const noexcept { return fake_handle(by_conversion); }
  cudaStream_t get_stream() const noexcept { return fake_handle(by_get_stream_member); }
  cudaStream_t stream() const noexcept { return fake_handle(by_stream_member); }
};
struct stream_ref_conversion_and_members {
  operator cuda::stream_ref() const noexcept { return cuda::stream_ref{fake_handle(by_stream_ref_conversion)}; }
  cudaStream_t get_stream() const noexcept { return fake_handle(by_get_stream_member); }
  cudaStream_t stream() const noexcept { return fake_handle(by_stream_member); }
};
struct both_members {
  cudaStream_t get_stream() const noexcept { return fake_handle(by_get_stream_member); }
  cudaStream_t stream() const noexcept { return fake_handle(by_stream_member); }
};
// Explicit conversion is not a route, so the member wins.
struct explicit_conversion_and_member {
  explicit operator cudaStream_t() const noexcept { return fake_handle(by_conversion); }
  cudaStream_t get_stream() const noexcept { return fake_handle(by_get_stream_member); }
};

} // namespace lib

TEST_CASE("priority: tag_invoke beats conversion beats get_stream() beats stream()") {
  CHECK(streamlike::get_stream(lib::all_routes{}) == fake_handle(by_tag_invoke));
  CHECK(streamlike::get_stream(lib::conversion_and_members{}) == fake_handle(by_conversion));
  CHECK(streamlike::get_stream(lib::stream_ref_conversion_and_members{}) == fake_handle(by_stream_ref_conversion));
  CHECK(streamlike::get_stream(lib::both_members{}) == fake_handle(by_get_stream_member));
  CHECK(streamlike::get_stream(lib::explicit_conversion_and_member{}) == fake_handle(by_get_stream_member));
}

// --- noexcept mirrors the route -------------------------------------------------------------------

TEST_CASE("get_stream is noexcept exactly when the chosen route is") {
  // Handles.
  static_assert(noexcept(streamlike::get_stream(std::declval<cudaStream_t>())));
  static_assert(noexcept(streamlike::get_stream(std::declval<stream_view>())));
  static_assert(noexcept(streamlike::get_stream(std::declval<cuda::stream_ref>())));
  // tag_invoke.
  static_assert(noexcept(streamlike::get_stream(lib::hidden_friend{})));
  static_assert(!noexcept(streamlike::get_stream(lib::throwing_friend{})));
  // Conversions.
  static_assert(noexcept(streamlike::get_stream(lib::converts_to_handle{})));
  static_assert(!noexcept(streamlike::get_stream(lib::converts_throwing{})));
  static_assert(noexcept(streamlike::get_stream(lib::converts_to_stream_ref_only{})));
  static_assert(!noexcept(streamlike::get_stream(lib::converts_to_stream_ref_throwing{})));
  // Members.
  static_assert(noexcept(streamlike::get_stream(lib::member_get_stream{})));
  static_assert(!noexcept(streamlike::get_stream(lib::member_get_stream_throwing{})));
  static_assert(noexcept(streamlike::get_stream(lib::member_stream{})));
  static_assert(!noexcept(streamlike::get_stream(lib::member_stream_throwing{})));

  // The throwing routes still work.
  CHECK(streamlike::get_stream(lib::throwing_friend{}) == fake_handle(by_tag_invoke));
  CHECK(streamlike::get_stream(lib::converts_throwing{}) == fake_handle(by_conversion));
  CHECK(streamlike::get_stream(lib::converts_to_stream_ref_throwing{}) == fake_handle(by_stream_ref_conversion));
  CHECK(streamlike::get_stream(lib::member_get_stream_throwing{}) == fake_handle(by_get_stream_member));
  CHECK(streamlike::get_stream(lib::member_stream_throwing{}) == fake_handle(by_stream_member));
}

// --- constexpr ------------------------------------------------------------------------------------

namespace lib {
struct constexpr_member {
  constexpr cudaStream_t get_stream() const noexcept { return cudaStream_t{}; }
};
struct constexpr_friend {
  friend constexpr cudaStream_t tag_invoke(get_stream_t, constexpr_friend) noexcept { return cudaStream_t{}; }
};
} // namespace lib

TEST_CASE("get_stream is usable in constant expressions") {
  static_assert(streamlike::get_stream(cudaStream_t{}) == cudaStream_t{});
  static_assert(streamlike::get_stream(stream_view{cudaStream_t{}}) == cudaStream_t{});
  static_assert(streamlike::get_stream(cuda::stream_ref{cudaStream_t{}}) == cudaStream_t{});
  static_assert(streamlike::get_stream(lib::constexpr_member{}).get() == cudaStream_t{});
  static_assert(streamlike::get_stream(lib::constexpr_friend{}).get() == cudaStream_t{});
  constexpr stream_view view = streamlike::get_stream(lib::constexpr_member{});
  CHECK(view.get() == nullptr);
}

// --- The rvalue-owner rule ------------------------------------------------------------------------

namespace lib {
// Owns its stream (in a real type the destructor would destroy it).
struct owner {
  cudaStream_t handle;
  cudaStream_t get_stream() const noexcept { return handle; }
};
struct converting_owner {
  operator cudaStream_t() const noexcept { return fake_handle(by_conversion); }
};
struct tag_invoke_owner {
  friend stream_view tag_invoke(get_stream_t, const tag_invoke_owner&) noexcept { return fake_handle(by_tag_invoke); }
};
} // namespace lib

template <>
inline constexpr bool streamlike::enable_stream_owner<lib::owner> = true;
template <>
inline constexpr bool streamlike::enable_stream_owner<lib::converting_owner> = true;
template <>
inline constexpr bool streamlike::enable_stream_owner<lib::tag_invoke_owner> = true;

TEST_CASE("an owner is viewed as an lvalue and refused as an rvalue, whatever its route") {
  static_assert(views<lib::owner&>);
  static_assert(views<const lib::owner&>);
  static_assert(refused_as_temporary_owner<lib::owner>);
  static_assert(refused_as_temporary_owner<lib::owner&&>);
  static_assert(refused_as_temporary_owner<const lib::owner&&>);
  static_assert(refused_as_temporary_owner<lib::converting_owner>);
  static_assert(refused_as_temporary_owner<lib::tag_invoke_owner>);
  // Its result converts to no usable view: the conversion exists only to fail with the message.
  static_assert(!std::convertible_to<streamlike::temporary_owner_use_export_stream<lib::owner>, cudaStream_t>);
  static_assert(views<const lib::converting_owner&>);
  static_assert(views<const lib::tag_invoke_owner&>);

  static_assert(streamlike::stream_like<lib::owner&>);
  static_assert(streamlike::stream_like<const lib::owner&>);
  static_assert(!streamlike::stream_like<lib::owner>);
  static_assert(!streamlike::stream_like<lib::owner&&>);
  static_assert(!streamlike::stream_like<lib::converting_owner>);
  static_assert(!streamlike::stream_like<lib::tag_invoke_owner&&>);

  const lib::owner o{fake_handle(0x8000)};
  CHECK(streamlike::get_stream(o) == fake_handle(0x8000));
  const lib::converting_owner c;
  CHECK(streamlike::get_stream(c) == fake_handle(by_conversion));
  const lib::tag_invoke_owner t;
  CHECK(streamlike::get_stream(t) == fake_handle(by_tag_invoke));
}

TEST_CASE("without enable_stream_owner the same type is viewed as an rvalue too") {
  // lib::member_get_stream is lib::owner without the opt-in.
  static_assert(views<lib::member_get_stream>);
  static_assert(views<lib::member_get_stream&&>);
}

// --- Refusals -------------------------------------------------------------------------------------

namespace lib {
struct plain {};
struct converts_to_int {
  operator int() const noexcept { return 0; }
};
// A free function named get_stream is not a route (only tag_invoke is found by ADL).
struct free_function_only {};
inline cudaStream_t get_stream(const free_function_only&) noexcept { return fake_handle(0x9000); }
} // namespace lib

// An integer is refused even where someone wrote a tag_invoke for it: which stream 0, 1 or 2
// means depends on a convention, so integers go through the named decoders only. (A template, so
// that it matches std::uintptr_t exactly and no other type reaches it by conversion.)
namespace streamlike {
template <std::same_as<std::uintptr_t> Address>
stream_view tag_invoke(get_stream_t, Address address) noexcept {
  return reinterpret_cast<cudaStream_t>(address);
}
} // namespace streamlike

TEST_CASE("integers, bool, nullptr, void* and types without a route are refused") {
  static_assert(refused<int>);
  static_assert(refused<const int&>);
  static_assert(refused<long>);
  static_assert(refused<bool>);
  static_assert(refused<std::nullptr_t>);
  static_assert(refused<void*>);
  static_assert(refused<const void*>);
  static_assert(refused<int*>);
  static_assert(refused<lib::plain>);
  static_assert(refused<lib::converts_to_int>);
  static_assert(refused<lib::free_function_only>);

  static_assert(streamlike::tag_invocable<get_stream_t, std::uintptr_t>);
  static_assert(refused<std::uintptr_t>);
}

TEST_CASE("the refusal overload returns void, so std::invocable cannot be used to judge") {
  // get_stream is *invocable* with anything (the refusal overload explains the error at the
  // call), so stream_like must ask for a stream_view, not for invocability.
  static_assert(std::invocable<const get_stream_t&, int>);
  static_assert(std::invocable<const get_stream_t&, lib::plain>);
  static_assert(std::is_void_v<std::invoke_result_t<const get_stream_t&, int>>);
  static_assert(!streamlike::stream_like<int>);
  static_assert(!streamlike::stream_like<std::nullptr_t>);
  static_assert(!streamlike::stream_like<void*>);
  static_assert(!streamlike::stream_like<bool>);
  static_assert(!streamlike::stream_like<lib::plain>);
}

TEST_CASE("get_stream is an object of type get_stream_t") {
  static_assert(std::same_as<streamlike::tag_t<streamlike::get_stream>, get_stream_t>);
  static_assert(std::is_empty_v<get_stream_t>);
  // A function object can be passed around, unlike an overload set.
  const auto f = streamlike::get_stream;
  CHECK(f(fake_handle(0x1234)) == fake_handle(0x1234));
}

// --- null pointer constants returned by a route ----------------------------------------------------

namespace lib {
// std::nullptr_t converts to cudaStream_t, but a route that returns it returns no stream.
struct get_stream_returns_nullptr {
  std::nullptr_t get_stream() const noexcept { return nullptr; }
};
struct tag_invoke_returns_nullptr {
  friend std::nullptr_t tag_invoke(get_stream_t, const tag_invoke_returns_nullptr&) noexcept { return nullptr; }
};
} // namespace lib

TEST_CASE("a member or tag_invoke returning std::nullptr_t is not a route, though nullptr converts to a handle") {
  static_assert(refused<lib::get_stream_returns_nullptr>);
  static_assert(refused<lib::tag_invoke_returns_nullptr>);
  static_assert(!streamlike::stream_like<lib::get_stream_returns_nullptr&>);
  static_assert(!streamlike::stream_like<lib::tag_invoke_returns_nullptr&>);
}
