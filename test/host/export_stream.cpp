// Tests for streamlike/export_stream.hpp that need no GPU: every route (tag_invoke, member
// export_stream(), shared_stream copy/move, std::shared_ptr<S> as a keep-alive, an rvalue
// stream_owner moved in), their priority, and the stream_exporter concept. Streams here are
// default streams, whose facts are never queried, so no CUDA call is made.
#include <streamlike/export_stream.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_exporter.hpp>
#include <streamlike/stream_owner.hpp>
#include <streamlike/tag_invoke.hpp>
#include <streamlike/unique_stream.hpp>

#include "host_support.hpp"

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

using streamlike::shared_stream;
using streamlike::stream_view;
using host_test::contains;
using host_test::thrown;

namespace {

// When set, the calling thread's next operator new throws std::bad_alloc (and clears it).
thread_local bool fail_next_allocation = false;

// Runs `f` with the calling thread's first allocation failing; true if std::bad_alloc came out.
// No doctest macro runs inside, so only `f` can meet the failing allocation.
template <class F>
bool throws_bad_alloc_on_first_allocation(F&& f) {
  bool threw = false;
  fail_next_allocation = true;
  try {
    std::forward<F>(f)();
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  fail_next_allocation = false;
  return threw;
}

} // namespace

// Replaced global allocation functions (for throws_bad_alloc_on_first_allocation); otherwise plain malloc/free.
void* operator new(std::size_t size) {
  if (fail_next_allocation) {
    fail_next_allocation = false;
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace fake {

// A stream owner that owns nothing real: its handle is a default stream (so exporting it makes
// no CUDA call) and its destructor only counts. A moved-from owner holds no handle and does not
// count, so "destroyed exactly once" means the owned stream was released exactly once.
class counting_owner {
public:
  explicit counting_owner(int& destroyed, cudaStream_t handle = cudaStreamPerThread) noexcept
      : handle_(handle), destroyed_(&destroyed) {}
  counting_owner(counting_owner&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)), destroyed_(other.destroyed_) {}
  counting_owner& operator=(counting_owner&&) = delete;
  ~counting_owner() {
    if (handle_ != nullptr) ++*destroyed_;
  }

  [[nodiscard]] stream_view get_stream() const noexcept { return handle_; }
  [[nodiscard]] bool owns() const noexcept { return handle_ != nullptr; }

private:
  cudaStream_t handle_;
  int* destroyed_;
};

// A stream_like type that is not an owner, for std::shared_ptr<S>.
class counting_view {
public:
  counting_view(stream_view view, int& destroyed) noexcept : view_(view), destroyed_(&destroyed) {}
  counting_view(const counting_view&) = delete;
  counting_view& operator=(const counting_view&) = delete;
  ~counting_view() { ++*destroyed_; }
  [[nodiscard]] stream_view get_stream() const noexcept { return view_; }

private:
  stream_view view_;
  int* destroyed_;
};

// Route 1, a hidden friend: exports the legacy default stream.
struct tagged {
  friend shared_stream tag_invoke(streamlike::export_stream_t, const tagged&) {
    return shared_stream::legacy_default();
  }
};

// Route 2: exports the per-thread default stream.
struct with_member {
  [[nodiscard]] shared_stream export_stream() const { return shared_stream::per_thread_default(); }
};

// Both routes 1 and 2: tag_invoke must win (legacy, not per-thread).
struct tagged_and_member {
  friend shared_stream tag_invoke(streamlike::export_stream_t, const tagged_and_member&) {
    return shared_stream::legacy_default();
  }
  [[nodiscard]] shared_stream export_stream() const { return shared_stream::per_thread_default(); }
};

// An owner (route 3) that also has a member export_stream(): the member must win, and the owner
// must not be moved from. Its own stream is per-thread; the member exports legacy.
class owner_with_member : public counting_owner {
public:
  using counting_owner::counting_owner;
  [[nodiscard]] shared_stream export_stream() const { return shared_stream::legacy_default(); }
};

// An owner (route 3) with a tag_invoke: tag_invoke must win. Exports legacy; owns per-thread.
class owner_with_tag_invoke : public counting_owner {
public:
  using counting_owner::counting_owner;
  friend shared_stream tag_invoke(streamlike::export_stream_t, owner_with_tag_invoke&&) {
    return shared_stream::legacy_default();
  }
};

// A stream_like type whose tag_invoke, found through std::shared_ptr<S>'s template argument,
// must beat the shared_ptr built-in. Views per-thread; the tag_invoke exports legacy.
struct tagged_through_shared_ptr {
  [[nodiscard]] stream_view get_stream() const noexcept { return stream_view::per_thread_default(); }
  friend shared_stream tag_invoke(streamlike::export_stream_t, const std::shared_ptr<tagged_through_shared_ptr>&) {
    return shared_stream::legacy_default();
  }
};

// A tag_invoke that returns something other than a shared_stream: not an exporter, and it does
// not fall through to the member either.
struct tag_invoke_returns_view {
  friend stream_view tag_invoke(streamlike::export_stream_t, const tag_invoke_returns_view&) {
    return stream_view::legacy_default();
  }
  [[nodiscard]] shared_stream export_stream() const { return shared_stream::per_thread_default(); }
};

// A member export_stream() that returns a view: not a route.
struct member_returns_view {
  [[nodiscard]] stream_view export_stream() const { return stream_view::legacy_default(); }
};

} // namespace fake

namespace streamlike {
template <>
inline constexpr bool enable_stream_owner<fake::counting_owner> = true;
template <>
inline constexpr bool enable_stream_owner<fake::owner_with_member> = true;
template <>
inline constexpr bool enable_stream_owner<fake::owner_with_tag_invoke> = true;
} // namespace streamlike

TEST_CASE("export_stream is an object of type export_stream_t") {
  static_assert(std::is_same_v<decltype(streamlike::export_stream), const streamlike::export_stream_t>);
  static_assert(std::is_same_v<streamlike::tag_t<streamlike::export_stream>, streamlike::export_stream_t>);
}

TEST_CASE("stream_exporter: what can and cannot export a stream it keeps alive") {
  using streamlike::stream_exporter;
  // Exporters.
  static_assert(stream_exporter<shared_stream&>);
  static_assert(stream_exporter<const shared_stream&>);
  static_assert(stream_exporter<shared_stream>);
  static_assert(stream_exporter<std::shared_ptr<stream_view>>);
  static_assert(stream_exporter<std::shared_ptr<stream_view>&>);
  static_assert(stream_exporter<const std::shared_ptr<stream_view>&>);
  static_assert(stream_exporter<std::shared_ptr<const stream_view>>);
  static_assert(stream_exporter<std::shared_ptr<shared_stream>>);
  static_assert(stream_exporter<std::shared_ptr<streamlike::unique_stream>>);
  static_assert(stream_exporter<fake::counting_owner>); // an rvalue owner
  static_assert(stream_exporter<fake::counting_owner&&>);
  static_assert(stream_exporter<streamlike::unique_stream>);
  static_assert(stream_exporter<fake::tagged&>);
  static_assert(stream_exporter<fake::with_member&>);
  // Views carry no ownership.
  static_assert(!stream_exporter<stream_view>);
  static_assert(!stream_exporter<stream_view&>);
  static_assert(!stream_exporter<cudaStream_t>);
  static_assert(!stream_exporter<cuda::stream_ref>);
  // Never streams.
  static_assert(!stream_exporter<int>);
  static_assert(!stream_exporter<std::uintptr_t>);
  static_assert(!stream_exporter<std::nullptr_t>);
  static_assert(!stream_exporter<void*>);
  // An lvalue owner must be std::move'd: exporting it must not silently steal it.
  static_assert(!stream_exporter<fake::counting_owner&>);
  // Nor can a const rvalue owner be moved from; a copy would make a second owner of one stream.
  static_assert(!stream_exporter<const fake::counting_owner>);
  static_assert(!stream_exporter<const streamlike::unique_stream>);
  static_assert(!stream_exporter<const fake::counting_owner&>);
  static_assert(!stream_exporter<streamlike::unique_stream&>);
  // A shared_ptr to something that is not a stream.
  static_assert(!stream_exporter<std::shared_ptr<int>>);
  static_assert(!stream_exporter<std::unique_ptr<stream_view>>);
  // A tag_invoke or member that returns a view is not an export.
  static_assert(!stream_exporter<fake::tag_invoke_returns_view&>);
  static_assert(!stream_exporter<fake::member_returns_view&>);
}

TEST_CASE("route 1: tag_invoke") {
  const fake::tagged t;
  const shared_stream s = streamlike::export_stream(t);
  CHECK(s.view() == stream_view::legacy_default());
}

TEST_CASE("route 2: member export_stream()") {
  const fake::with_member m;
  const shared_stream s = streamlike::export_stream(m);
  CHECK(s.view() == stream_view::per_thread_default());
}

TEST_CASE("route 3: a shared_stream is copied from an lvalue and moved from an rvalue") {
  shared_stream source = shared_stream::keep_alive(stream_view::per_thread_default(), 0);
  {
    const shared_stream copy = streamlike::export_stream(source);
    CHECK(copy == source);
    CHECK(source.use_count() == 2);
    const shared_stream from_const = streamlike::export_stream(std::as_const(source));
    CHECK(source.use_count() == 3);
  }
  CHECK(source.use_count() == 1);
  const shared_stream moved = streamlike::export_stream(std::move(source));
  CHECK_FALSE(source); // NOLINT(bugprone-use-after-move): the moved-from state is what is tested
  CHECK(moved.use_count() == 1);
  CHECK(moved.view() == stream_view::per_thread_default());
}

TEST_CASE("route 3: std::shared_ptr<S> is held while the shared_stream lives") {
  auto pointer = std::make_shared<stream_view>(stream_view::per_thread_default());
  CHECK(pointer.use_count() == 1);
  {
    const shared_stream s = streamlike::export_stream(pointer);
    CHECK(pointer.use_count() == 2); // one more: the shared_stream's
    CHECK(s.view() == stream_view::per_thread_default());
    const shared_stream copy = s;    // NOLINT(performance-unnecessary-copy-initialization)
    CHECK(pointer.use_count() == 2); // copies share it
  }
  CHECK(pointer.use_count() == 1); // released with the last copy
}

TEST_CASE("route 3: a moved-in std::shared_ptr<S> keeps its object alive until the last copy drops") {
  int destroyed = 0;
  auto pointer = std::make_shared<fake::counting_view>(stream_view::legacy_default(), destroyed);
  shared_stream s = streamlike::export_stream(std::move(pointer));
  CHECK(pointer == nullptr); // NOLINT(bugprone-use-after-move)
  CHECK(s.view() == stream_view::legacy_default());
  shared_stream copy = s;
  s.reset();
  CHECK(destroyed == 0);
  copy.reset();
  CHECK(destroyed == 1);
}

TEST_CASE("route 3: a null std::shared_ptr<S> is refused with std::invalid_argument") {
  const std::shared_ptr<stream_view> null;
  const auto e = thrown<std::invalid_argument>([&] { (void)streamlike::export_stream(null); });
  REQUIRE(e.has_value());
  const std::string what = e->what();
  CHECK_MESSAGE(contains(what, "export_stream"), what);
  CHECK_MESSAGE(contains(what, "null"), what);
}

TEST_CASE("route 3: an rvalue stream_owner is moved in and destroyed exactly once, with the last copy") {
  int destroyed = 0;
  fake::counting_owner owner(destroyed);
  shared_stream s = streamlike::export_stream(std::move(owner));
  CHECK_FALSE(owner.owns()); // NOLINT(bugprone-use-after-move): moved in, not copied
  CHECK(destroyed == 0);     // moving is not destroying
  CHECK(s.view() == stream_view::per_thread_default());
  CHECK(s.use_count() == 1);

  shared_stream copy = s;
  shared_stream moved = std::move(s);
  moved.reset();
  CHECK(destroyed == 0); // `copy` still holds it
  copy.reset();
  CHECK(destroyed == 1);
}

TEST_CASE("route 3: a temporary stream_owner is moved in too") {
  int destroyed = 0;
  {
    const shared_stream s = streamlike::export_stream(fake::counting_owner(destroyed, cudaStreamLegacy));
    CHECK(s.view() == stream_view::legacy_default());
    CHECK(destroyed == 0);
  }
  CHECK(destroyed == 1);
}

TEST_CASE("route 3 via from_owner: the named function export_stream calls for owners") {
  int destroyed = 0;
  {
    const shared_stream s = shared_stream::from_owner(fake::counting_owner(destroyed));
    CHECK(s.view() == stream_view::per_thread_default());
  }
  CHECK(destroyed == 1);
}

TEST_CASE("priority: tag_invoke beats the member") {
  const fake::tagged_and_member both;
  CHECK(streamlike::export_stream(both).view() == stream_view::legacy_default());
}

TEST_CASE("priority: the member beats the owner built-in, and the owner is not moved from") {
  int destroyed = 0;
  fake::owner_with_member owner(destroyed);
  const shared_stream s = streamlike::export_stream(std::move(owner));
  CHECK(s.view() == stream_view::legacy_default()); // the member's, not the owned per-thread stream
  CHECK(owner.owns());                              // NOLINT(bugprone-use-after-move): not moved
  CHECK(destroyed == 0);
  // Through the member an lvalue exports too.
  CHECK(streamlike::stream_exporter<fake::owner_with_member&>);
}

TEST_CASE("priority: tag_invoke beats the owner built-in") {
  int destroyed = 0;
  fake::owner_with_tag_invoke owner(destroyed);
  const shared_stream s = streamlike::export_stream(std::move(owner));
  CHECK(s.view() == stream_view::legacy_default());
  CHECK(owner.owns()); // NOLINT(bugprone-use-after-move): the tag_invoke took a reference only
}

TEST_CASE("priority: tag_invoke beats the std::shared_ptr built-in") {
  const auto pointer = std::make_shared<fake::tagged_through_shared_ptr>();
  const shared_stream s = streamlike::export_stream(pointer);
  CHECK(s.view() == stream_view::legacy_default());
  CHECK(pointer.use_count() == 1); // the built-in would have held a copy
}

// A failed export must leave the caller's owner (or pointer) untouched, as
// std::shared_ptr(std::unique_ptr&&) does: otherwise the failure destroys the caller's stream.
// The failure is made deterministic, and independent of any GPU, by failing the one allocation
// an export makes (its control block).
TEST_CASE("a failed export of an rvalue owner leaves the owner with the caller") {
  int destroyed = 0;
  fake::counting_owner owner(destroyed);
  CHECK(throws_bad_alloc_on_first_allocation([&] { (void)streamlike::export_stream(std::move(owner)); }));
  CHECK(owner.owns()); // NOLINT(bugprone-use-after-move): the export failed, so nothing was taken
  CHECK(destroyed == 0);
}

TEST_CASE("a failed export of an rvalue std::shared_ptr leaves the pointer with the caller") {
  int destroyed = 0;
  auto pointer = std::make_shared<fake::counting_view>(stream_view::legacy_default(), destroyed);
  CHECK(throws_bad_alloc_on_first_allocation([&] { (void)streamlike::export_stream(std::move(pointer)); }));
  CHECK(pointer != nullptr); // NOLINT(bugprone-use-after-move)
  CHECK(destroyed == 0);     // the pointee (for a real owner: the stream) was not released
}

TEST_CASE("the allocation-failure hook used above works (so the should_fail tests fail for their stated reason)") {
  // Control: without the hook, the same export succeeds; with it, the allocation fails.
  int destroyed = 0;
  CHECK_NOTHROW((void)streamlike::export_stream(fake::counting_owner(destroyed)));
  CHECK(destroyed == 1);
  CHECK(
      throws_bad_alloc_on_first_allocation([&] { (void)streamlike::export_stream(fake::counting_owner(destroyed)); }));
}
