// Tests for streamlike/tag_invoke.hpp: tag_t, tag_invocable, nothrow_tag_invocable,
// tag_invoke_result_t and the lookup rules (ADL only, never unqualified lookup).

// A would-be hijacker, declared BEFORE the header on purpose: unqualified lookup inside a template
// sees only what was declared before the template's definition, so this is the one place from
// which a global `tag_invoke` could leak into streamlike's calls. The header's poison pill must
// hide it. Neither argument type is associated with the global namespace, so ADL cannot find it.
namespace hijack {
struct tag_t {};
struct plain {};
} // namespace hijack
int tag_invoke(hijack::tag_t, hijack::plain);

#include <streamlike/tag_invoke.hpp>

#include <doctest/doctest.h>

#include <concepts>
#include <string>
#include <type_traits>
#include <utility>

namespace mylib {

// A customization point object in the tag_invoke style.
inline constexpr struct frobnicate_t {
  template <class T>
    requires streamlike::tag_invocable<frobnicate_t, T>
  constexpr auto operator()(T&& t) const noexcept(streamlike::nothrow_tag_invocable<frobnicate_t, T>)
      -> streamlike::tag_invoke_result_t<frobnicate_t, T> {
    return tag_invoke(*this, std::forward<T>(t));
  }
} frobnicate{};

// Opts in with a hidden friend, noexcept and constexpr.
struct widget {
  int value;
  friend constexpr int tag_invoke(frobnicate_t, const widget& w) noexcept { return w.value * 2; }
};

// Opts in with a hidden friend that may throw and returns something else.
struct throwing_widget {
  friend std::string tag_invoke(frobnicate_t, const throwing_widget&) { return "thrown?"; }
};

// Only an lvalue overload: rvalues must not be tag_invocable.
struct lvalue_widget {
  friend int tag_invoke(frobnicate_t, lvalue_widget&) noexcept { return 7; }
};

struct not_opted_in {};

} // namespace mylib

// A type its author cannot touch...
namespace foreign {
struct gadget {
  long id;
};
} // namespace foreign

// ...opted in by an overload in the tag's namespace: ADL searches the namespaces of the tag's
// type as well as the argument's.
namespace mylib {
constexpr long tag_invoke(frobnicate_t, const foreign::gadget& g) noexcept { return g.id + 1; }
} // namespace mylib

// ------------------------------------------------------------------------------------------------

TEST_CASE("tag_t names the type of a customization point object") {
  static_assert(std::same_as<streamlike::tag_t<mylib::frobnicate>, mylib::frobnicate_t>);
  // Decayed: no const, no reference, though the object is `inline constexpr`.
  static_assert(!std::is_const_v<streamlike::tag_t<mylib::frobnicate>>);
}

TEST_CASE("tag_invocable: a hidden friend is found by ADL") {
  static_assert(streamlike::tag_invocable<mylib::frobnicate_t, mylib::widget>);
  static_assert(streamlike::tag_invocable<mylib::frobnicate_t, const mylib::widget&>);
  static_assert(std::same_as<streamlike::tag_invoke_result_t<mylib::frobnicate_t, mylib::widget&>, int>);
  static_assert(std::same_as<streamlike::tag_invoke_result<mylib::frobnicate_t, mylib::widget&>::type, int>);
  CHECK(mylib::frobnicate(mylib::widget{21}) == 42);
}

TEST_CASE("tag_invocable is false where no overload exists") {
  static_assert(!streamlike::tag_invocable<mylib::frobnicate_t, mylib::not_opted_in>);
  static_assert(!streamlike::tag_invocable<mylib::frobnicate_t, int>);
  static_assert(!streamlike::nothrow_tag_invocable<mylib::frobnicate_t, mylib::not_opted_in>);
  // The CPO is constrained on it, so it is not callable either.
  static_assert(!std::invocable<const mylib::frobnicate_t&, mylib::not_opted_in>);
}

TEST_CASE("tag_invocable respects the argument's value category") {
  static_assert(streamlike::tag_invocable<mylib::frobnicate_t, mylib::lvalue_widget&>);
  static_assert(!streamlike::tag_invocable<mylib::frobnicate_t, mylib::lvalue_widget>);
  static_assert(!streamlike::tag_invocable<mylib::frobnicate_t, const mylib::lvalue_widget&>);
  mylib::lvalue_widget w;
  CHECK(mylib::frobnicate(w) == 7);
}

TEST_CASE("nothrow_tag_invocable follows the overload's noexcept") {
  static_assert(streamlike::nothrow_tag_invocable<mylib::frobnicate_t, const mylib::widget&>);
  static_assert(streamlike::tag_invocable<mylib::frobnicate_t, const mylib::throwing_widget&>);
  static_assert(!streamlike::nothrow_tag_invocable<mylib::frobnicate_t, const mylib::throwing_widget&>);
  static_assert(
      std::same_as<streamlike::tag_invoke_result_t<mylib::frobnicate_t, const mylib::throwing_widget&>, std::string>);
  // The CPO propagates it.
  static_assert(noexcept(mylib::frobnicate(mylib::widget{1})));
  static_assert(!noexcept(mylib::frobnicate(mylib::throwing_widget{})));
  CHECK(mylib::frobnicate(mylib::throwing_widget{}) == "thrown?");
}

TEST_CASE("an overload in the tag's namespace opts in a foreign type") {
  static_assert(streamlike::tag_invocable<mylib::frobnicate_t, const foreign::gadget&>);
  static_assert(streamlike::nothrow_tag_invocable<mylib::frobnicate_t, foreign::gadget>);
  static_assert(std::same_as<streamlike::tag_invoke_result_t<mylib::frobnicate_t, foreign::gadget>, long>);
  CHECK(mylib::frobnicate(foreign::gadget{41}) == 42);
}

TEST_CASE("tag_invoke through the machinery is usable in constant expressions") {
  static_assert(mylib::frobnicate(mylib::widget{5}) == 10);
  static_assert(mylib::frobnicate(foreign::gadget{9}) == 10);
}

TEST_CASE("unqualified lookup cannot hijack: a global tag_invoke is not a candidate") {
  // The global `::tag_invoke(hijack::tag_t, hijack::plain)` declared at the top of this file is
  // callable here, by ordinary lookup...
  static_assert(std::same_as<decltype(tag_invoke(hijack::tag_t{}, hijack::plain{})), int>);
  // ...but the machinery looks by ADL only, and ADL for these types never reaches `::`.
  static_assert(!streamlike::tag_invocable<hijack::tag_t, hijack::plain>);
  static_assert(!streamlike::nothrow_tag_invocable<hijack::tag_t, hijack::plain>);
}
