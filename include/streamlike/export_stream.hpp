// streamlike/export_stream.hpp: the customization point that yields a shared_stream keeping the
// stream alive for as long as the importer holds it (the C++ analog of __cuda_stream__ plus
// "keep a reference to the exporting object").
//
// streamlike::export_stream(t) tries, in order:
//   1. tag_invoke(streamlike::export_stream, t), found by ADL;
//   2. a member t.export_stream();
//   3. the built-ins: a shared_stream (copied or moved); a std::shared_ptr<S> for a stream_like
//      S (the shared_stream holds the pointer); an rvalue stream_owner (moved in, destroyed with
//      the last reference).
// Each must yield a shared_stream. A view (stream_view, cudaStream_t, cuda::stream_ref) is not
// exportable: it carries no ownership. The default streams are exported by
// shared_stream::legacy_default() and per_thread_default(), which are immortal.
#ifndef STREAMLIKE_EXPORT_STREAM_HPP
#define STREAMLIKE_EXPORT_STREAM_HPP

#include <streamlike/get_stream.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_owner.hpp>
#include <streamlike/tag_invoke.hpp>

#include <concepts>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace streamlike {

struct export_stream_t;

namespace detail::export_stream_routes {

template <class T>
inline constexpr bool is_shared_ptr_to_stream = false;
template <class S>
inline constexpr bool is_shared_ptr_to_stream<std::shared_ptr<S>> = stream_like<S&>;

template <class T>
concept member_export = requires(T&& t) {
  { std::forward<T>(t).export_stream() } -> std::same_as<shared_stream>;
};

enum class route { tag_invoke, member, shared, shared_ptr, owner, lvalue_owner, none };

template <class T>
consteval route choose() {
  using U = std::remove_cvref_t<T>;
  if constexpr (tag_invocable<const export_stream_t&, T>) {
    return std::same_as<tag_invoke_result_t<const export_stream_t&, T>, shared_stream> ? route::tag_invoke
                                                                                       : route::none;
  } else if constexpr (member_export<T>) {
    return route::member;
  } else if constexpr (std::same_as<U, shared_stream>) {
    return route::shared;
  } else if constexpr (is_shared_ptr_to_stream<U>) {
    return route::shared_ptr;
  } else if constexpr (stream_owner<U>) {
    // Moved in: an lvalue or a const rvalue cannot be, and a copy would be a second owner.
    return std::is_lvalue_reference_v<T> || std::is_const_v<std::remove_reference_t<T>> ? route::lvalue_owner
                                                                                        : route::owner;
  } else {
    return route::none;
  }
}

template <class T>
concept routed = (choose<T>() < route::lvalue_owner);

} // namespace detail::export_stream_routes

/// The type of streamlike::export_stream (routes: the file comment). It lives in namespace
/// streamlike so that ADL for tag_invoke also searches there.
struct export_stream_t {
  template <class T>
    requires detail::export_stream_routes::routed<T>
  [[nodiscard]] shared_stream operator()(T&& t) const {
    namespace routes = detail::export_stream_routes;
    constexpr routes::route chosen = routes::choose<T>();
    if constexpr (chosen == routes::route::tag_invoke) {
      return detail::tag_invoke_adl::call(*this, std::forward<T>(t));
    } else if constexpr (chosen == routes::route::member) {
      return std::forward<T>(t).export_stream();
    } else if constexpr (chosen == routes::route::shared) {
      return std::forward<T>(t);
    } else if constexpr (chosen == routes::route::shared_ptr) {
      if (!t)
        throw std::invalid_argument(
            "streamlike::export_stream: the std::shared_ptr is null; expected a pointer to a stream");
      const stream_view view = streamlike::get_stream(*t);
      return shared_stream::keep_alive(view, std::forward<T>(t));
    } else {
      return shared_stream::from_owner(std::forward<T>(t));
    }
  }

  // Where no route applies, say why at the call (returns void, so stream_exporter stays false:
  // stream_exporter.hpp).
  template <class T>
    requires(!detail::export_stream_routes::routed<T>)
  void operator()(T&&) const {
    namespace routes = detail::export_stream_routes;
    constexpr routes::route chosen = routes::choose<T>();
    static_assert(chosen != routes::route::lvalue_owner,
                  "streamlike::export_stream: a stream owner is moved into the shared_stream, and this one is an "
                  "lvalue (or const). Write export_stream(std::move(owner)) on a non-const owner.");
    static_assert(chosen != routes::route::none,
                  "streamlike::export_stream: this type cannot export a stream it keeps alive. A view "
                  "(stream_view, cudaStream_t, cuda::stream_ref) carries no ownership; use shared_stream::adopt, "
                  "keep_alive or the default streams. Or opt the type in: (1) tag_invoke(streamlike::"
                  "export_stream_t, T) returning shared_stream, found by ADL; (2) a member export_stream() "
                  "returning shared_stream; (3) enable_stream_owner<T> for a type that owns its stream.");
  }
};

inline namespace cpo {
/// A shared_stream that keeps the stream of `t` alive (see the file comment).
inline constexpr export_stream_t export_stream{};
} // namespace cpo

} // namespace streamlike

// The concept over this customization point, as stream_like.hpp is over get_stream.hpp; included
// here too so that code including only this header keeps seeing it.
#include <streamlike/stream_exporter.hpp>

#endif // STREAMLIKE_EXPORT_STREAM_HPP
