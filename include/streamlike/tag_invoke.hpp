// streamlike/tag_invoke.hpp: the tag_invoke protocol (P1895), self-contained.
//
// A customization point object `cpo` of type `Tag` calls `tag_invoke(cpo, args...)`, found by
// argument-dependent lookup only: in the namespaces of the arguments and of `Tag` itself.
// streamlike's tags live in namespace `streamlike`, so an overload written there also works for a
// type you cannot touch.
//
// stdexec deprecated tag_invoke in 2026 in favour of member functions and `query`; streamlike
// accepts both styles (see get_stream.hpp), so no user is forced to pick.
#ifndef STREAMLIKE_TAG_INVOKE_HPP
#define STREAMLIKE_TAG_INVOKE_HPP

#include <type_traits>
#include <utility>

namespace streamlike {
namespace detail::tag_invoke_adl {

// Poison pill: unqualified lookup of `tag_invoke` from here finds this deleted function and
// nothing else, so only argument-dependent lookup can supply a candidate.
void tag_invoke() = delete;

template <class Tag, class... Args>
concept adl_tag_invocable = requires(Tag&& tag, Args&&... args) {
  tag_invoke(std::forward<Tag>(tag), std::forward<Args>(args)...);
};

template <class Tag, class... Args>
concept adl_nothrow_tag_invocable = adl_tag_invocable<Tag, Args...> && requires(Tag&& tag, Args&&... args) {
  { tag_invoke(std::forward<Tag>(tag), std::forward<Args>(args)...) }
  noexcept;
};

// The call itself, for CPO implementations.
template <class Tag, class... Args>
  requires adl_tag_invocable<Tag, Args...>
constexpr decltype(auto) call(Tag&& tag, Args&&... args) noexcept(adl_nothrow_tag_invocable<Tag, Args...>) {
  return tag_invoke(std::forward<Tag>(tag), std::forward<Args>(args)...);
}

template <class Tag, class... Args>
using result_t = decltype(call(std::declval<Tag>(), std::declval<Args>()...));

} // namespace detail::tag_invoke_adl

/// The type of a customization point object: `tag_t<streamlike::get_stream>`.
template <auto& Tag>
using tag_t = std::decay_t<decltype(Tag)>;

/// `tag_invoke(Tag{}, Args...)` resolves by argument-dependent lookup.
template <class Tag, class... Args>
concept tag_invocable = detail::tag_invoke_adl::adl_tag_invocable<Tag, Args...>;

/// ... and is declared `noexcept`.
template <class Tag, class... Args>
concept nothrow_tag_invocable = detail::tag_invoke_adl::adl_nothrow_tag_invocable<Tag, Args...>;

template <class Tag, class... Args>
using tag_invoke_result_t = detail::tag_invoke_adl::result_t<Tag, Args...>;

template <class Tag, class... Args>
  requires tag_invocable<Tag, Args...>
struct tag_invoke_result {
  using type = tag_invoke_result_t<Tag, Args...>;
};

} // namespace streamlike

#endif // STREAMLIKE_TAG_INVOKE_HPP
