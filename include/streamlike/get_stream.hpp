// streamlike/get_stream.hpp: the customization point that turns any stream-like object into a
// stream_view.
//
// streamlike::get_stream(t) tries these routes in order; the first that applies wins:
//
//   1. tag_invoke(streamlike::get_stream, t), found by argument-dependent lookup: the explicit,
//      non-intrusive opt-in (a hidden friend, an overload in T's namespace, or an overload in
//      namespace streamlike for a type you cannot touch).
//   2. t is already a handle: a stream_view, a cudaStream_t (== CUstream), or anything implicitly
//      convertible to cudaStream_t or to cuda::stream_ref (rmm::cuda_stream_view, c10's CUDAStream).
//   3. Members, as CCCL's cuda::get_stream accepts them: t.get_stream(), then t.stream(), then
//      t.query(cuda::get_stream_t{}) (the last where the CCCL in use has cuda::get_stream_t).
//      A member counts only if it returns a handle of route 2.
//
// Never a route: integers, bool, nullptr and void*. An integer becomes a view only through the
// named decoders of stream_encodings.hpp. A type that specializes disable_stream_like<T> to true
// has no route either, whatever members it has.
//
// Lifetime: an rvalue of a stream-owning type (enable_stream_owner) or of shared_stream is
// refused, because the view would dangle as soon as the temporary dies; export_stream moves
// such an owner instead.
//
// get_stream is noexcept exactly when the chosen route is. Where no route applies the call does
// not compile, and a static_assert says why and what to do.
#ifndef STREAMLIKE_GET_STREAM_HPP
#define STREAMLIKE_GET_STREAM_HPP

#include <streamlike/config.hpp>
#include <streamlike/disable_stream_like.hpp>
#include <streamlike/enable_stream_owner.hpp>
#include <streamlike/stream_view.hpp>
#include <streamlike/tag_invoke.hpp>

#include <concepts>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace streamlike {

struct get_stream_t;

namespace detail {
/// get_stream refuses a temporary of T (the lifetime rule above): true for owners, and for
/// shared_stream, whose temporary may hold the last reference (shared_stream.hpp says so).
template <class T>
inline constexpr bool view_dangles_from_temporary = enable_stream_owner<T>;

/// False exactly for an argument get_stream refuses as a temporary owner. stream_like checks it
/// first, under this name, so that a constrained function's "constraints not satisfied" note reads
/// "not_a_temporary_owner_else_use_export_stream<...> evaluated to false" (g++, clang++).
template <class T>
inline constexpr bool not_a_temporary_owner_else_use_export_stream =
    std::is_lvalue_reference_v<T> || !view_dangles_from_temporary<std::remove_cvref_t<T>>;

template <class>
inline constexpr bool always_false = false;
} // namespace detail

#define STREAMLIKE_DETAIL_TEMPORARY_OWNER_MESSAGE                                                             \
  "streamlike::get_stream: this argument is a temporary that owns (or shares) its stream, so the view would " \
  "dangle when it dies. Keep the owner in a variable and view that, or call "                                 \
  "streamlike::export_stream(std::move(owner)) to move it into a shared_stream."

/// What get_stream(temporary owner) returns in place of a stream_view: nothing usable, a type whose
/// name says what to do. The call itself fails to compile with the message above; the type carries
/// the refusal where the result goes (`auto v = ...`, `stream_view v = ...`: converting it fails with
/// the same message, under nvcc too, where a void result stopped at "cannot deduce auto type").
/// It is not a stream_view, so stream_like<Owner> stays false and testing the concept trips nothing.
template <class Owner>
struct temporary_owner_use_export_stream {
  operator stream_view() const noexcept { // NOLINT(google-explicit-constructor): fails where used
    static_assert(detail::always_false<Owner>, STREAMLIKE_DETAIL_TEMPORARY_OWNER_MESSAGE);
    return stream_view::legacy_default();
  }
};

namespace detail::get_stream_routes {

// Integers, bool, nullptr and void* convert to no stream, whatever their value.
template <class U>
concept never_a_stream = std::integral<U> || std::same_as<U, std::nullptr_t> ||
    std::conjunction_v<std::is_pointer<U>, std::is_void<std::remove_pointer_t<U>>>;

// Route 2: the argument is already a handle.
template <class T>
concept handle = !never_a_stream<std::remove_cvref_t<T>> &&
                 (std::same_as<std::remove_cvref_t<T>, stream_view> || std::convertible_to<T, cudaStream_t> ||
                  std::convertible_to<T, cuda::stream_ref>);

template <handle T>
inline constexpr bool nothrow_handle = std::same_as<std::remove_cvref_t<T>, stream_view> ||
                                       (std::convertible_to<T, cudaStream_t>
                                            ? std::is_nothrow_convertible_v<T, cudaStream_t>
                                            : std::is_nothrow_convertible_v<T, cuda::stream_ref>);

// cudaStream_t is preferred over cuda::stream_ref where a type converts to both (as
// rmm::cuda_stream_view does), so the conversion is never ambiguous.
template <handle T>
constexpr stream_view view_of(T&& t) noexcept(nothrow_handle<T>) {
  if constexpr (std::same_as<std::remove_cvref_t<T>, stream_view>) {
    return t;
  } else if constexpr (std::convertible_to<T, cudaStream_t>) {
    return stream_view{static_cast<cudaStream_t>(std::forward<T>(t))};
  } else {
    return stream_view{static_cast<cuda::stream_ref>(std::forward<T>(t))};
  }
}

// Route 3: members, called with the argument's own value category (so `&`-qualified members
// refuse temporaries).
template <class T>
concept member_get_stream = requires(T&& t) {
  { std::forward<T>(t).get_stream() } -> handle;
};
template <class T>
concept member_stream = requires(T&& t) {
  { std::forward<T>(t).stream() } -> handle;
};
#if STREAMLIKE_HAS_CUDA_GET_STREAM
template <class T>
concept member_query = requires(T&& t) {
  { std::forward<T>(t).query(::cuda::get_stream_t{}) } -> handle;
};
#else
template <class T>
concept member_query = false;
#endif

enum class route {
  tag_invoke,
  handle,
  member_get_stream,
  member_stream,
  member_query,
  // The rest are refusals, each with its own message.
  rvalue_owner,
  never_a_stream,
  disabled,
  tag_invoke_returns_no_handle,
  none,
};

template <class T>
consteval route choose() {
  using U = std::remove_cvref_t<T>;
  if constexpr (view_dangles_from_temporary<U> && !std::is_lvalue_reference_v<T>) {
    return route::rvalue_owner;
  } else if constexpr (never_a_stream<U>) {
    return route::never_a_stream;
  } else if constexpr (disable_stream_like<U>) {
    return route::disabled;
  } else if constexpr (tag_invocable<const get_stream_t&, T>) { // the tag as the call passes it: *this
    if constexpr (handle<tag_invoke_result_t<const get_stream_t&, T>>) {
      return route::tag_invoke;
    } else {
      return route::tag_invoke_returns_no_handle;
    }
  } else if constexpr (handle<T>) {
    return route::handle;
  } else if constexpr (member_get_stream<T>) {
    return route::member_get_stream;
  } else if constexpr (member_stream<T>) {
    return route::member_stream;
  } else if constexpr (member_query<T>) {
    return route::member_query;
  } else {
    return route::none;
  }
}

template <class T>
inline constexpr route route_of = choose<T>();

template <class T>
concept routed = route_of<T> < route::rvalue_owner;

template <class T, route R = route_of<T>>
inline constexpr bool nothrow = false;
template <class T>
inline constexpr bool nothrow<T, route::tag_invoke> =
    std::conjunction_v<std::bool_constant<nothrow_tag_invocable<const get_stream_t&, T>>,
                       std::bool_constant<nothrow_handle<tag_invoke_result_t<const get_stream_t&, T>>>>;
template <class T>
inline constexpr bool nothrow<T, route::handle> = nothrow_handle<T>;
template <class T>
inline constexpr bool nothrow<T, route::member_get_stream> =
    noexcept(std::declval<T>().get_stream()) && nothrow_handle<decltype(std::declval<T>().get_stream())>;
template <class T>
inline constexpr bool nothrow<T, route::member_stream> =
    noexcept(std::declval<T>().stream()) && nothrow_handle<decltype(std::declval<T>().stream())>;
#if STREAMLIKE_HAS_CUDA_GET_STREAM
template <class T>
inline constexpr bool nothrow<T, route::member_query> =
    noexcept(std::declval<T>().query(::cuda::get_stream_t{})) &&
    nothrow_handle<decltype(std::declval<T>().query(::cuda::get_stream_t{}))>;
#endif

} // namespace detail::get_stream_routes

/// The type of streamlike::get_stream. It lives in namespace streamlike so that ADL for
/// tag_invoke also searches there (see the file comment, route 1).
struct get_stream_t {
  template <class T>
    requires detail::get_stream_routes::routed<T>
  [[nodiscard]] constexpr stream_view operator()(T&& t) const noexcept(detail::get_stream_routes::nothrow<T>) {
    namespace routes = detail::get_stream_routes;
    constexpr routes::route chosen = routes::route_of<T>;
    if constexpr (chosen == routes::route::tag_invoke) {
      return routes::view_of(detail::tag_invoke_adl::call(*this, std::forward<T>(t)));
    } else if constexpr (chosen == routes::route::handle) {
      return routes::view_of(std::forward<T>(t));
    } else if constexpr (chosen == routes::route::member_get_stream) {
      return routes::view_of(std::forward<T>(t).get_stream());
    } else if constexpr (chosen == routes::route::member_stream) {
      return routes::view_of(std::forward<T>(t).stream());
    } else {
      static_assert(chosen == routes::route::member_query);
#if STREAMLIKE_HAS_CUDA_GET_STREAM
      return routes::view_of(std::forward<T>(t).query(::cuda::get_stream_t{}));
#endif
    }
  }

  // A temporary owner lands here: the error names export_stream at the call, and the result's type
  // (temporary_owner_use_export_stream, declared, not deduced, so checking stream_like<T>
  // instantiates nothing) names it wherever the result is used.
  template <class T>
    requires(detail::get_stream_routes::route_of<T> == detail::get_stream_routes::route::rvalue_owner)
  temporary_owner_use_export_stream<std::remove_cvref_t<T>>
  operator()(T&&) const noexcept {
    static_assert(detail::always_false<T>, STREAMLIKE_DETAIL_TEMPORARY_OWNER_MESSAGE);
    return {};
  }

  // Every other argument that has no route lands here, so the error says why at the call. It
  // returns void, so `stream_like<T>` (which asks for a stream_view) stays false for such T and
  // generic code can test for it without tripping these assertions.
  template <class T>
    requires(!detail::get_stream_routes::routed<T> &&
             detail::get_stream_routes::route_of<T> != detail::get_stream_routes::route::rvalue_owner)
  void operator()(T&&) const {
    namespace routes = detail::get_stream_routes;
    constexpr routes::route chosen = routes::route_of<T>;
    static_assert(chosen != routes::route::never_a_stream,
                  "streamlike::get_stream: an integer, bool, nullptr or void* is not a stream; which stream 0, 1 "
                  "or 2 means depends on the convention it was written in. Decode integers with a named function "
                  "(streamlike::from_address, from_cuda_stream_protocol, from_dlpack_stream, "
                  "from_cuda_array_interface_stream) and name default streams with "
                  "stream_view::legacy_default() or stream_view::per_thread_default().");
    static_assert(chosen != routes::route::disabled,
                  "streamlike::get_stream: this type opted out of stream_like (disable_stream_like<T> is true): it "
                  "is not one stream (a pool, say, hands out the next stream on every call). Take one stream from "
                  "it and pass that.");
    static_assert(chosen != routes::route::tag_invoke_returns_no_handle,
                  "streamlike::get_stream: the tag_invoke(streamlike::get_stream_t, ...) found for this type must "
                  "return a stream handle: streamlike::stream_view, cudaStream_t or cuda::stream_ref.");
    static_assert(chosen != routes::route::none,
                  "streamlike::get_stream: this type is not stream_like. Opt it in by one of these routes (tried "
                  "in this order): (1) tag_invoke(streamlike::get_stream_t, const T&) returning stream_view, found "
                  "by ADL; (2) an implicit conversion to cudaStream_t or cuda::stream_ref; (3) a member "
                  "get_stream(), stream() or query(cuda::get_stream_t) returning a stream handle. See docs/routes.md.");
  }
};

// Niebloid: an object in an inline namespace, so argument-dependent lookup never finds a
// function in its place and a type in namespace streamlike may still have a hidden friend
// named get_stream.
inline namespace cpo {
/// The stream_view of any stream-like `t` (see the file comment).
inline constexpr get_stream_t get_stream{};
} // namespace cpo

} // namespace streamlike

#undef STREAMLIKE_DETAIL_TEMPORARY_OWNER_MESSAGE

#endif // STREAMLIKE_GET_STREAM_HPP
