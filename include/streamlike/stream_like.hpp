// streamlike/stream_like.hpp: the concept of everything get_stream accepts.
#ifndef STREAMLIKE_STREAM_LIKE_HPP
#define STREAMLIKE_STREAM_LIKE_HPP

#include <streamlike/get_stream.hpp>
#include <streamlike/stream_view.hpp>

#include <concepts>
#include <utility>

namespace streamlike {

/// `streamlike::get_stream(t)` yields a borrowed stream_view for an expression `t` of type
/// `T&&` (reference collapsing applies): `stream_like<unique_stream&>` holds, while
/// `stream_like<unique_stream>` (a temporary owner, whose view would dangle) does not.
/// A temporary owner fails the first test, named so that the compiler's note says what to do.
template <class T>
concept stream_like = detail::not_a_temporary_owner_else_use_export_stream<T> && requires(T&& t) {
  { streamlike::get_stream(std::forward<T>(t)) } -> std::same_as<stream_view>;
};

/// ... and getting the view cannot throw.
template <class T>
concept nothrow_stream_like = stream_like<T> && requires(T&& t) {
  { streamlike::get_stream(std::forward<T>(t)) }
  noexcept;
};

} // namespace streamlike

#endif // STREAMLIKE_STREAM_LIKE_HPP
