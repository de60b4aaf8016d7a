// Tests for streamlike/stream_view.hpp: layout, construction rules, conversions, the named default
// streams, equality and hashing, the operations' signatures. Nothing here touches the CUDA driver
// (event.cpp and event_capture_safety.cpp run record()).
#include <streamlike/event.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_view.hpp>

#include "host_support.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <type_traits>
#include <unordered_set>

using streamlike::stream_view;
using host_test::fake_handle;

TEST_CASE("stream_view is exactly one handle, trivially copyable") {
  static_assert(sizeof(stream_view) == sizeof(cudaStream_t));
  static_assert(alignof(stream_view) == alignof(cudaStream_t));
  static_assert(std::is_trivially_copyable_v<stream_view>);
  static_assert(std::is_trivially_destructible_v<stream_view>);
  static_assert(std::is_nothrow_copy_constructible_v<stream_view>);
  static_assert(std::is_same_v<stream_view::value_type, cudaStream_t>);
}

TEST_CASE("stream_view has no default constructor") {
  // The default streams are named: legacy_default() / per_thread_default().
  static_assert(!std::is_default_constructible_v<stream_view>);
}

TEST_CASE("stream_view cannot be made from an integer, bool, nullptr or void*") {
  static_assert(!std::is_constructible_v<stream_view, int>);
  static_assert(!std::is_constructible_v<stream_view, long>);
  static_assert(!std::is_constructible_v<stream_view, unsigned long long>);
  static_assert(!std::is_constructible_v<stream_view, std::uintptr_t>);
  static_assert(!std::is_constructible_v<stream_view, bool>);
  static_assert(!std::is_constructible_v<stream_view, char>);
  static_assert(!std::is_constructible_v<stream_view, std::nullptr_t>);
  static_assert(!std::is_constructible_v<stream_view, void*>);
  static_assert(!std::is_convertible_v<int, stream_view>);
  static_assert(!std::is_convertible_v<std::nullptr_t, stream_view>);
}

// A literal 0 (or 0L, or false in C++03 days) is a null pointer constant: without the deleted
// integer constructor it would convert to cudaStream_t and make a view of the handle 0. The
// std::is_constructible checks above pass an int *value*, which is no null pointer constant, so
// they cannot see that; these take the literal itself, inside a requires-expression that the
// template parameter makes a substitution (false, not a hard error) when it does not compile.
template <class View>
concept direct_init_from_literal_zero = requires {
  View{0};
};
template <class View>
concept direct_init_from_literal_zero_long = requires {
  View{0L};
};
template <class View>
concept copy_init_from_literal_zero = requires(void (*take)(View)) {
  take(0);
};

TEST_CASE("stream_view cannot be made from the literal 0, the null pointer constant") {
  static_assert(!direct_init_from_literal_zero<stream_view>, "stream_view{0} must not compile");
  static_assert(!direct_init_from_literal_zero_long<stream_view>, "stream_view{0L} must not compile");
  static_assert(!copy_init_from_literal_zero<stream_view>, "passing 0 for a stream_view must not compile");
  // The checks can see a type that accepts the literal: cudaStream_t itself does.
  static_assert(direct_init_from_literal_zero<cudaStream_t>);
  static_assert(copy_init_from_literal_zero<cudaStream_t>);
}

TEST_CASE("stream_view converts implicitly from and to cudaStream_t") {
  static_assert(std::is_nothrow_convertible_v<cudaStream_t, stream_view>);
  static_assert(std::is_nothrow_convertible_v<stream_view, cudaStream_t>);

  const cudaStream_t handle = fake_handle(0x1000);
  const stream_view view = handle; // implicit in
  const cudaStream_t back = view;  // implicit out
  CHECK(view.get() == handle);
  CHECK(back == handle);
}

TEST_CASE("stream_view converts implicitly from and to cuda::stream_ref") {
  static_assert(std::is_nothrow_convertible_v<cuda::stream_ref, stream_view>);
  static_assert(std::is_nothrow_convertible_v<stream_view, cuda::stream_ref>);

  const cudaStream_t handle = fake_handle(0x2000);
  const cuda::stream_ref ref{handle};
  const stream_view view = ref;           // implicit in
  const cuda::stream_ref ref_back = view; // implicit out
  CHECK(view.get() == handle);
  CHECK(ref_back.get() == handle);

  // Round trip handle -> view -> ref -> view -> handle keeps the handle.
  const stream_view again = static_cast<cuda::stream_ref>(stream_view{handle});
  CHECK(static_cast<cudaStream_t>(again) == handle);
}

TEST_CASE("stream_view is constexpr from a null cudaStream_t") {
  constexpr stream_view view{cudaStream_t{}};
  static_assert(view.get() == cudaStream_t{});
  static_assert(view == cudaStream_t{});
  static_assert(view == stream_view{cudaStream_t{}});
  constexpr cudaStream_t back = view;
  static_assert(back == nullptr);
  constexpr cuda::stream_ref ref = view;
  static_assert(ref.get() == nullptr);
  constexpr stream_view from_ref = cuda::stream_ref{cudaStream_t{}};
  static_assert(from_ref == view);
  static_assert(from_ref == ref);
}

TEST_CASE("the named default streams are cudaStreamLegacy and cudaStreamPerThread") {
  CHECK(stream_view::legacy_default().get() == cudaStreamLegacy);
  CHECK(stream_view::per_thread_default().get() == cudaStreamPerThread);
  CHECK(stream_view::legacy_default() != stream_view::per_thread_default());
  static_assert(noexcept(stream_view::legacy_default()));
  static_assert(noexcept(stream_view::per_thread_default()));
}

TEST_CASE("is_default is true for the handles 0, 1 and 2 only") {
  CHECK(stream_view{cudaStream_t{}}.is_default());
  CHECK(stream_view{cudaStreamLegacy}.is_default());
  CHECK(stream_view{cudaStreamPerThread}.is_default());
  CHECK(stream_view::legacy_default().is_default());
  CHECK(stream_view::per_thread_default().is_default());
  CHECK_FALSE(stream_view{fake_handle(3)}.is_default());
  CHECK_FALSE(stream_view{fake_handle(0x1000)}.is_default());
}

TEST_CASE("== and != compare handles against stream_view, cudaStream_t and cuda::stream_ref") {
  const cudaStream_t a = fake_handle(0x1000);
  const cudaStream_t b = fake_handle(0x2000);
  const stream_view va{a};
  const stream_view vb{b};

  SUBCASE("stream_view with stream_view") {
    CHECK(va == stream_view{a});
    CHECK_FALSE(va == vb);
    CHECK(va != vb);
    CHECK_FALSE(va != stream_view{a});
  }
  SUBCASE("stream_view with cudaStream_t, both sides") {
    CHECK(va == a);
    CHECK(a == va);
    CHECK(va != b);
    CHECK(b != va);
    CHECK_FALSE(va == b);
    CHECK_FALSE(b == va);
    CHECK_FALSE(va != a);
    CHECK_FALSE(a != va);
  }
  SUBCASE("stream_view with cuda::stream_ref, both sides") {
    const cuda::stream_ref ra{a};
    const cuda::stream_ref rb{b};
    CHECK(va == ra);
    CHECK(ra == va);
    CHECK(va != rb);
    CHECK(rb != va);
    CHECK_FALSE(va == rb);
    CHECK_FALSE(rb == va);
    CHECK_FALSE(va != ra);
    CHECK_FALSE(ra != va);
  }
  SUBCASE("handles are compared, not what they mean") {
    // 0 and cudaStreamLegacy may name the same stream, but they are different handles.
    CHECK(stream_view{cudaStream_t{}} != stream_view::legacy_default());
  }
  SUBCASE("comparisons are noexcept") {
    static_assert(noexcept(va == vb));
    static_assert(noexcept(va == a));
    static_assert(noexcept(a == va));
    static_assert(noexcept(va == cuda::stream_ref{a}));
  }
}

// The same null pointer constants against wait() and ==: without their deleted overloads, 0 and
// nullptr would become a null cudaEvent_t or a null cudaStream_t (compile-fail cases
// stream_view_wait_on_* and stream_view_equals_* check the error names those overloads).
template <class View>
concept waits_on_literal_zero = requires(const View& view) {
  view.wait(0);
};
template <class View>
concept waits_on_nullptr = requires(const View& view) {
  view.wait(nullptr);
};
template <class View>
concept waits_on_integer_variable = requires(const View& view, long value) {
  view.wait(value);
};
template <class View>
concept equals_literal_zero = requires(const View& view) {
  view == 0;
};
template <class View>
concept equals_integer_variable = requires(const View& view, long value) {
  view == value;
};
template <class View>
concept equals_nullptr = requires(const View& view) {
  view == nullptr;
};
template <class View>
concept nullptr_equals = requires(const View& view) {
  nullptr == view;
};

TEST_CASE("stream_view::wait and == refuse 0, integers and nullptr") {
  static_assert(!waits_on_literal_zero<stream_view>, "view.wait(0) must not compile");
  static_assert(!waits_on_nullptr<stream_view>, "view.wait(nullptr) must not compile");
  static_assert(!waits_on_integer_variable<stream_view>, "view.wait(some_long) must not compile");
  static_assert(!equals_literal_zero<stream_view>, "view == 0 must not compile");
  static_assert(!equals_integer_variable<stream_view>, "view == some_long must not compile");
  static_assert(!equals_nullptr<stream_view>, "view == nullptr must not compile");
  static_assert(!nullptr_equals<stream_view>, "nullptr == view must not compile");
  // What they are for still compiles.
  static_assert(requires(const stream_view& view, cudaEvent_t event) { view.wait(event); });
  static_assert(requires(const stream_view& view) { view.wait(view); });
  static_assert(requires(const stream_view& view) { view == cudaStream_t{}; });
}

TEST_CASE("stream_view has the operations of the owners, record() included, none noexcept") {
  const stream_view v = stream_view::legacy_default();
  const streamlike::shared_stream owner;
  static_assert(std::is_same_v<decltype(v.record()), streamlike::event>);
  static_assert(std::is_same_v<decltype(v.record(streamlike::event_options{.timing = true})), streamlike::event>);
  static_assert(std::is_same_v<decltype(v.record()), decltype(owner.record())>);
  static_assert(!noexcept(v.record()));
  static_assert(!noexcept(v.record(streamlike::event_options{})));
  // The same members answer on a view and an owner (the owner's errors name it).
  static_assert(requires(cudaEvent_t e) {
    v.is_capturing();
    v.capture_info();
    v.is_done();
    v.sync();
    v.wait(e);
    v.wait(v);
    owner.is_capturing();
    owner.capture_info();
    owner.is_done();
    owner.sync();
    owner.wait(e);
    owner.wait(v);
  });
}

TEST_CASE("std::hash<stream_view> hashes the handle") {
  const std::hash<stream_view> hash;
  const cudaStream_t a = fake_handle(0x1000);
  CHECK(hash(stream_view{a}) == hash(stream_view{a}));
  // Consistent with hashing the raw handle, so mixed containers agree.
  CHECK(hash(stream_view{a}) == std::hash<cudaStream_t>{}(a));
  static_assert(noexcept(hash(stream_view{a})));
}

TEST_CASE("stream_view works as a key of std::unordered_set") {
  std::unordered_set<stream_view> set;
  CHECK(set.insert(stream_view{fake_handle(0x1000)}).second);
  CHECK(set.insert(stream_view{fake_handle(0x2000)}).second);
  CHECK(set.insert(stream_view::legacy_default()).second);
  CHECK(set.insert(stream_view::per_thread_default()).second);
  // Equal views are one key.
  CHECK_FALSE(set.insert(stream_view{fake_handle(0x1000)}).second);
  CHECK_FALSE(set.insert(stream_view{cudaStreamLegacy}).second);
  CHECK(set.size() == 4);
  CHECK(set.count(stream_view{fake_handle(0x2000)}) == 1);
  CHECK(set.count(stream_view{fake_handle(0x3000)}) == 0);
}
